/**
 * Shipping GPUs, for what a launch does on a whole device rather than on one SM: the SM count
 * (waves, idle SMs), the boost clock and DRAM bandwidth (the SM's share of bandwidth per cycle, for
 * the bandwidth-bound latency reading), the L2 size, the GPC count (the cluster estimate), and the
 * published global-memory latencies that bound the latency estimate. Every figure names its
 * source; a figure we could not find published is null and shown as unknown.
 *
 * Sources (the `src` ids below):
 * - A100-WP: NVIDIA A100 Tensor Core GPU Architecture whitepaper (2020), and the A100 datasheet
 *   (nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf): 40 GB HBM2 1,555 GB/s, 80 GB HBM2e 2,039 GB/s.
 * - A30-DS, A10-DS, L4-DS, L40S-DS: the NVIDIA A30, A10, L4 and L40S datasheets.
 * - GA102-WP: NVIDIA Ampere GA102 GPU Architecture whitepaper (RTX 3090, A10's GPU).
 * - ADA-WP: NVIDIA Ada GPU Architecture whitepaper (RTX 4090, L40S's AD102).
 * - H100-WP / H100-DS: NVIDIA H100 Tensor Core GPU Architecture whitepaper and H100 datasheet
 *   (SXM5: 132 SMs, 1,980 MHz, 3.35 TB/s; PCIe: 114 SMs, 1,755 MHz, 2.0 TB/s; 50 MB L2).
 * - H200-DS, GH200-DS: the NVIDIA H200 (4.8 TB/s HBM3e) and GH200 Grace Hopper (96 GB HBM3, 4 TB/s) datasheets.
 * - B200-DS: NVIDIA DGX/HGX B200 specifications (8 TB/s HBM3e); the SM count (148 of 160) is from
 *   Chips and Cheese, "Nvidia's B200: Keeping the CUDA Juggernaut Rolling" (2025).
 * - BW-WP: NVIDIA RTX Blackwell GPU Architecture whitepaper (RTX 5090: 170 SMs, 2,407 MHz, 1,792 GB/s, 96 MB L2).
 * - ORIN-TB: NVIDIA Jetson AGX Orin Series Technical Brief (64 GB: 16 SMs, 1.3 GHz, 204.8 GB/s, 4 MB L2).
 * Latencies (cycles, unloaded DRAM loads that miss L1 and L2):
 * - LUO24: Luo et al. 2024, "Benchmarking and Dissecting the Nvidia Hopper GPU Architecture"
 *   (arXiv:2402.13499): A100 about 470, RTX 4090 about 540, H800 about 480.
 * - ABD22: Abdelkhalik et al. 2022, "Demystifying the Nvidia Ampere Architecture through
 *   Microbenchmarking and Instruction-level Analysis" (arXiv:2208.11174): A100 about 290, with a
 *   chase that bypasses the caches.
 * - CNC23: Chips and Cheese, "Nvidia's H100: Funny L2, and Tons of Bandwidth" (2023), DRAM latency
 *   in nanoseconds, converted at the part's boost clock: A100 about 640, H100 about 830 cycles.
 */
import { archName, parseArch } from './arch-table';

export interface GpuPart {
  name: string;
  /** Other names a setting or `--gpu` may use (lower case, no blanks). */
  aliases: readonly string[];
  arch: string;
  sms: number;
  boostClockMHz: number | null;
  dramBandwidthGBs: number | null;
  l2Bytes: number | null;
  /** Graphics processing clusters enabled: a thread block cluster runs inside one. */
  gpcs: number | null;
  /** Published global-memory latencies in SM cycles: the low and the high figure (equal with one source). */
  latency: { lowCycles: number; highCycles: number; note: string } | null;
  /** Where each figure comes from (ids in the module comment). */
  sources: Readonly<
    Partial<Record<'sms' | 'boostClockMHz' | 'dramBandwidthGBs' | 'l2Bytes' | 'gpcs' | 'latency', string>>
  >;
}

const MB = 1024 * 1024;

const AMPERE_GA100_LATENCY = {
  lowCycles: 290,
  highCycles: 640,
  note: '290 (ABD22, a cache-bypassing chase) to 640 cycles (CNC23); LUO24 measured about 470',
};
const ADA_LATENCY = { lowCycles: 540, highCycles: 540, note: 'about 540 cycles (LUO24, RTX 4090)' };
const HOPPER_LATENCY = { lowCycles: 480, highCycles: 830, note: '480 (LUO24, H800) to 830 cycles (CNC23, H100)' };

export const GPU_PARTS: readonly GpuPart[] = [
  {
    name: 'A100 SXM4 40GB',
    aliases: ['a100', 'a100-40gb', 'a100sxm4', 'a100sxm4-40gb'],
    arch: 'sm_80',
    sms: 108,
    boostClockMHz: 1410,
    dramBandwidthGBs: 1555,
    l2Bytes: 40 * MB,
    gpcs: 7,
    latency: AMPERE_GA100_LATENCY,
    sources: {
      sms: 'A100-WP',
      boostClockMHz: 'A100-WP',
      dramBandwidthGBs: 'A100-WP',
      l2Bytes: 'A100-WP',
      gpcs: 'A100-WP (7 of 8 GPCs)',
      latency: 'ABD22, CNC23',
    },
  },
  {
    name: 'A100 SXM4 80GB',
    aliases: ['a100-80gb', 'a100sxm4-80gb'],
    arch: 'sm_80',
    sms: 108,
    boostClockMHz: 1410,
    dramBandwidthGBs: 2039,
    l2Bytes: 40 * MB,
    gpcs: 7,
    latency: AMPERE_GA100_LATENCY,
    sources: {
      sms: 'A100-WP',
      boostClockMHz: 'A100-WP',
      dramBandwidthGBs: 'A100-WP (datasheet)',
      l2Bytes: 'A100-WP',
      gpcs: 'A100-WP (7 of 8 GPCs)',
      latency: 'ABD22, CNC23',
    },
  },
  {
    name: 'A30',
    aliases: ['a30'],
    arch: 'sm_80',
    sms: 56,
    boostClockMHz: 1440,
    dramBandwidthGBs: 933,
    l2Bytes: 24 * MB,
    gpcs: null,
    latency: AMPERE_GA100_LATENCY,
    sources: {
      sms: 'A30-DS (3,584 FP32 cores, 64 per SM)',
      boostClockMHz: 'A30-DS',
      dramBandwidthGBs: 'A30-DS',
      l2Bytes: 'A30-DS',
      latency: 'ABD22, CNC23 (A100, the same GA100)',
    },
  },
  {
    name: 'A10',
    aliases: ['a10'],
    arch: 'sm_86',
    sms: 72,
    boostClockMHz: 1695,
    dramBandwidthGBs: 600,
    l2Bytes: 6 * MB,
    gpcs: null,
    latency: null,
    sources: {
      sms: 'A10-DS (9,216 FP32 cores, 128 per SM)',
      boostClockMHz: 'A10-DS',
      dramBandwidthGBs: 'A10-DS',
      l2Bytes: 'GA102-WP',
    },
  },
  {
    name: 'GeForce RTX 3090',
    aliases: ['rtx3090', '3090'],
    arch: 'sm_86',
    sms: 82,
    boostClockMHz: 1695,
    dramBandwidthGBs: 936,
    l2Bytes: 6 * MB,
    gpcs: 7,
    latency: null,
    sources: {
      sms: 'GA102-WP',
      boostClockMHz: 'GA102-WP',
      dramBandwidthGBs: 'GA102-WP',
      l2Bytes: 'GA102-WP',
      gpcs: 'GA102-WP',
    },
  },
  {
    name: 'Jetson AGX Orin 64GB',
    aliases: ['orin', 'agx-orin', 'jetson-orin'],
    arch: 'sm_87',
    sms: 16,
    boostClockMHz: 1300,
    dramBandwidthGBs: 204.8,
    l2Bytes: 4 * MB,
    gpcs: 2,
    latency: null,
    sources: {
      sms: 'ORIN-TB (2,048 CUDA cores)',
      boostClockMHz: 'ORIN-TB',
      dramBandwidthGBs: 'ORIN-TB',
      l2Bytes: 'ORIN-TB',
      gpcs: 'ORIN-TB',
    },
  },
  {
    name: 'L4',
    aliases: ['l4'],
    arch: 'sm_89',
    sms: 58,
    boostClockMHz: 2040,
    dramBandwidthGBs: 300,
    l2Bytes: 48 * MB,
    gpcs: null,
    latency: ADA_LATENCY,
    sources: {
      sms: 'L4-DS (7,424 CUDA cores, 128 per SM)',
      boostClockMHz: 'L4-DS',
      dramBandwidthGBs: 'L4-DS',
      l2Bytes: 'L4-DS',
      latency: 'LUO24 (RTX 4090, the same Ada SM)',
    },
  },
  {
    name: 'L40S',
    aliases: ['l40s'],
    arch: 'sm_89',
    sms: 142,
    boostClockMHz: 2520,
    dramBandwidthGBs: 864,
    l2Bytes: 96 * MB,
    gpcs: null,
    latency: ADA_LATENCY,
    sources: {
      sms: 'L40S-DS (18,176 CUDA cores, 128 per SM)',
      boostClockMHz: 'L40S-DS',
      dramBandwidthGBs: 'L40S-DS',
      l2Bytes: 'ADA-WP',
      latency: 'LUO24 (RTX 4090, the same AD102)',
    },
  },
  {
    name: 'GeForce RTX 4090',
    aliases: ['rtx4090', '4090'],
    arch: 'sm_89',
    sms: 128,
    boostClockMHz: 2520,
    dramBandwidthGBs: 1008,
    l2Bytes: 72 * MB,
    gpcs: 11,
    latency: ADA_LATENCY,
    sources: {
      sms: 'ADA-WP',
      boostClockMHz: 'ADA-WP',
      dramBandwidthGBs: 'ADA-WP',
      l2Bytes: 'ADA-WP',
      gpcs: 'ADA-WP',
      latency: 'LUO24',
    },
  },
  {
    name: 'H100 SXM5',
    aliases: ['h100', 'h100-sxm', 'h100sxm5'],
    arch: 'sm_90',
    sms: 132,
    boostClockMHz: 1980,
    dramBandwidthGBs: 3350,
    l2Bytes: 50 * MB,
    gpcs: 8,
    latency: HOPPER_LATENCY,
    sources: {
      sms: 'H100-WP',
      boostClockMHz: 'H100-DS',
      dramBandwidthGBs: 'H100-DS',
      l2Bytes: 'H100-WP',
      gpcs: 'H100-WP (8 GPCs of the full GH100)',
      latency: 'LUO24, CNC23',
    },
  },
  {
    name: 'H100 PCIe',
    aliases: ['h100-pcie', 'h100pcie'],
    arch: 'sm_90',
    sms: 114,
    boostClockMHz: 1755,
    dramBandwidthGBs: 2000,
    l2Bytes: 50 * MB,
    gpcs: null,
    latency: HOPPER_LATENCY,
    sources: {
      sms: 'H100-WP',
      boostClockMHz: 'H100-DS',
      dramBandwidthGBs: 'H100-DS',
      l2Bytes: 'H100-WP',
      latency: 'LUO24, CNC23',
    },
  },
  {
    name: 'H200 SXM',
    aliases: ['h200'],
    arch: 'sm_90',
    sms: 132,
    boostClockMHz: 1980,
    dramBandwidthGBs: 4800,
    l2Bytes: 50 * MB,
    gpcs: 8,
    latency: HOPPER_LATENCY,
    sources: {
      sms: 'H200-DS (the H100 SXM5 GPU)',
      boostClockMHz: 'H200-DS',
      dramBandwidthGBs: 'H200-DS',
      l2Bytes: 'H100-WP',
      gpcs: 'H100-WP',
      latency: 'LUO24, CNC23 (Hopper)',
    },
  },
  {
    name: 'GH200 96GB',
    aliases: ['gh200'],
    arch: 'sm_90',
    sms: 132,
    boostClockMHz: 1980,
    dramBandwidthGBs: 4000,
    l2Bytes: 50 * MB,
    gpcs: 8,
    latency: HOPPER_LATENCY,
    sources: {
      sms: 'GH200-DS (the H100 SXM5 GPU)',
      boostClockMHz: 'GH200-DS',
      dramBandwidthGBs: 'GH200-DS (96 GB HBM3)',
      l2Bytes: 'H100-WP',
      gpcs: 'H100-WP',
      latency: 'LUO24, CNC23 (Hopper)',
    },
  },
  {
    name: 'B200',
    aliases: ['b200'],
    arch: 'sm_100',
    sms: 148,
    boostClockMHz: null,
    dramBandwidthGBs: 8000,
    l2Bytes: null,
    gpcs: null,
    latency: null,
    sources: { sms: 'B200-DS (Chips and Cheese)', dramBandwidthGBs: 'B200-DS' },
  },
  {
    name: 'GeForce RTX 5090',
    aliases: ['rtx5090', '5090'],
    arch: 'sm_120',
    sms: 170,
    boostClockMHz: 2407,
    dramBandwidthGBs: 1792,
    l2Bytes: 96 * MB,
    gpcs: null,
    latency: null,
    sources: { sms: 'BW-WP', boostClockMHz: 'BW-WP', dramBandwidthGBs: 'BW-WP', l2Bytes: 'BW-WP' },
  },
];

/** One common part per architecture, when the settings name none: the arch table's reference part. */
const DEFAULT_PART: Readonly<Record<string, string>> = {
  sm_80: 'A100 SXM4 40GB',
  sm_86: 'GeForce RTX 3090',
  sm_87: 'Jetson AGX Orin 64GB',
  sm_89: 'GeForce RTX 4090',
  sm_90: 'H100 SXM5',
  sm_100: 'B200',
  sm_120: 'GeForce RTX 5090',
};

const squeeze = (text: string) => text.toLowerCase().replace(/[\s_]+/g, '');

/** The part a name means (its name or an alias, case and blanks ignored), or undefined. */
export function findGpuPart(name: string): GpuPart | undefined {
  // `NVIDIA GeForce RTX 4090`, `GeForce RTX 4090` and `RTX 4090` are one part.
  const bare = (text: string) =>
    squeeze(text)
      .replace(/^nvidia/, '')
      .replace(/^geforce/, '');
  const wanted = bare(name);
  return GPU_PARTS.find((p) => bare(p.name) === wanted || p.aliases.includes(wanted));
}

/** The default part of an architecture (`sm_90`), or undefined for one with no shipping part in the table. */
export function defaultGpuPart(arch: string): GpuPart | undefined {
  const row = parseArch(arch);
  const name = row ? DEFAULT_PART[archName(row)] : undefined;
  return name ? findGpuPart(name) : undefined;
}

/** The parts to show for the target architectures: those the settings name for each arch, else each arch's default. */
export function partsForArchs(
  archs: readonly string[],
  named: readonly string[],
): { parts: GpuPart[]; unknown: string[] } {
  const chosen = named.map((n) => ({ n, part: findGpuPart(n) }));
  const unknown = chosen.filter((c) => !c.part).map((c) => c.n);
  const parts: GpuPart[] = [];
  for (const arch of archs) {
    const row = parseArch(arch);
    if (!row) continue;
    const name = archName(row);
    const mine = chosen.map((c) => c.part).filter((p): p is GpuPart => p !== undefined && p.arch === name);
    const list =
      mine.length > 0 || named.length > 0 ? mine : [defaultGpuPart(name)].filter((p): p is GpuPart => p !== undefined);
    for (const p of list) if (!parts.includes(p)) parts.push(p);
  }
  return { parts, unknown };
}
