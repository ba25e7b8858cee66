/**
 * Block sizes named the way real host code names them: typedef'd and `auto` types, locals
 * assigned once, namespace-qualified constants, functions that return a constant, and one name
 * declared in several blocks of a function.
 */
import * as assert from 'node:assert/strict';
import { loadFileAloneParser, readAlone } from '../support/file-alone';

/** Each launch's line (1-based) and block, as `16x8x1` or null. */
const blocks = (text: string) =>
  readAlone(text).launches.map(
    (l) =>
      `${l.span.start.line + 1}: ${l.block.value ? `${l.block.value.x}x${l.block.value.y}x${l.block.value.z}` : 'null'}`,
  );

describe('constants as written in real code', () => {
  before(loadFileAloneParser);

  it('reads constants of typedef names, `using` aliases, `std::` types and `auto`', () => {
    const text = [
      'typedef unsigned int uint;',
      'using index_type = int;',
      'void host(float* p) {',
      '  const uint TILE = 64;',
      '  tile_kernel<<<1, TILE>>>(p);',
      '  const index_type ROWS = 96;',
      '  row_kernel<<<1, ROWS>>>(p);',
      '  std::uint32_t constexpr kWide = 512;',
      '  wide_kernel<<<1, kWide>>>(p);',
      '  auto threads = 128;',
      '  plain_kernel<<<1, threads>>>(p);',
      '  const float ratio = 0.5f;',
      '  ratio_kernel<<<1, ratio>>>(p);',
      '}',
    ].join('\n');
    assert.deepEqual(blocks(text), ['5: 64x1x1', '7: 96x1x1', '9: 512x1x1', '11: 128x1x1', '13: null']);
  });

  it('reads `auto b = dim3(...)` and a local assigned once, and not one assigned again', () => {
    const text = [
      'void host(float* p, int n) {',
      '  int per_block = 256;',
      '  auto shape = dim3(per_block, 2);',
      '  pair_kernel<<<n, shape>>>(p);',
      '  int grow = 64;',
      '  if (n > 4096) grow *= 2;',
      '  grow_kernel<<<n, grow>>>(p);',
      '}',
    ].join('\n');
    assert.deepEqual(blocks(text), ['4: 256x2x1', '7: null']);
  });

  it('reads `auto b = dim3(...)` when another name is assigned a dim3 after it', () => {
    const text = [
      'void host(float* p, int n) {',
      '  auto tile = dim3(32, 4);',
      '  dim3 rows;',
      '  rows = dim3(64);',
      '  tile_kernel<<<n, tile>>>(p);',
      '  rows_kernel<<<n, rows>>>(p);',
      '}',
    ].join('\n');
    assert.deepEqual(blocks(text), ['5: 32x4x1', '6: 64x1x1']);
  });

  it('reads `T const N` of a type name, and leaves one of a class template unknown', () => {
    const text = [
      'void host(float* p) {',
      '  idx_t const kRows = 96;',
      '  rows_kernel<<<1, kRows>>>(p);',
      '  Scaled<8> const kScaled = 128;',
      '  scaled_kernel<<<1, kScaled>>>(p);',
      '}',
    ].join('\n');
    assert.deepEqual(blocks(text), ['3: 96x1x1', '5: null']);
  });

  it('reads a namespace-qualified constant when the plain name is defined in two namespaces', () => {
    const text = [
      'namespace gate { constexpr int threads = 256; }',
      'namespace norm { constexpr int threads = 128; }',
      'void host(float* p) {',
      '  dim3 block(gate::threads);',
      '  gate_kernel<<<1, block>>>(p);',
      '  norm_kernel<<<1, norm::threads>>>(p);',
      '  plain_kernel<<<1, threads>>>(p);',
      '}',
    ].join('\n');
    assert.deepEqual(blocks(text), ['5: 256x1x1', '6: 128x1x1', '7: null']);
  });

  it('reads a function without parameters that returns a constant, not one that computes its value', () => {
    const text = [
      'constexpr int warp_threads() { return 32; }',
      'inline int queried() { int w = 0; ask(&w); return w; }',
      'struct Tile { static constexpr int rows() noexcept { return 8; } };',
      'void host(float* p) {',
      '  warp_kernel<<<1, warp_threads()>>>(p);',
      '  const int from_call = warp_threads() * 4;',
      '  call_kernel<<<1, from_call>>>(p);',
      '  query_kernel<<<1, queried()>>>(p);',
      '  tile_kernel<<<1, dim3(32, Tile::rows())>>>(p);',
      '}',
    ].join('\n');
    assert.deepEqual(blocks(text), ['5: 32x1x1', '7: 128x1x1', '8: null', '9: 32x8x1']);
  });

  it('reads a name declared in both branches of an if/else from the branch of the launch', () => {
    const text = [
      'void host(float* p, bool wide) {',
      '  if (wide) {',
      '    const dim3 block(64, 4);',
      '    wide_kernel<<<1, block>>>(p);',
      '  } else {',
      '    const dim3 block(32);',
      '    narrow_kernel<<<1, block>>>(p);',
      '  }',
      '  if (wide) {',
      '    auto threads = 256;',
      '    a_kernel<<<1, threads>>>(p);',
      '  } else {',
      '    auto threads = 128;',
      '    b_kernel<<<1, threads>>>(p);',
      '  }',
      '}',
    ].join('\n');
    assert.deepEqual(blocks(text), ['4: 64x4x1', '7: 32x1x1', '11: 256x1x1', '14: 128x1x1']);
  });

  it('reads the declaration of the function a launch is in, not one of the same name in another function', () => {
    const text = [
      'void first(float* p) {',
      '  dim3 block(512);',
      '  first_kernel<<<1, block>>>(p);',
      '}',
      'void second(float* p) {',
      '  int block = 256;',
      '  second_kernel<<<1, block>>>(p);',
      '}',
      'void third(float* p, int block) {',
      '  third_kernel<<<1, block>>>(p);',
      '}',
    ].join('\n');
    assert.deepEqual(blocks(text), ['3: 512x1x1', '7: 256x1x1', '10: null']);
  });

  it('keeps a parameter unknown outside an inner block that declares its name again', () => {
    const text = [
      'void host(float* p, int threads) {',
      '  {',
      '    const int threads = 64;',
      '    inner_kernel<<<1, threads>>>(p);',
      '  }',
      '  outer_kernel<<<1, threads>>>(p);',
      '}',
    ].join('\n');
    assert.deepEqual(blocks(text), ['4: 64x1x1', '6: null']);
  });
});
