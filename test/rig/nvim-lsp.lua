-- Neovim's built-in LSP client (nvim 0.7 or later), headless, against one language server:
--
--   nvim --headless -u NONE -i NONE -n -c 'luafile test/rig/nvim-lsp.lua'
--
-- with its inputs in the environment (0.7 cannot pass arguments to a script):
--   LSP_CMD      the server's command line, as a JSON array            (required)
--   LSP_FILE     the file to open                                      (required)
--   LSP_ROOT     the workspace folder                                  (default: the file's folder)
--   LSP_LINE     1-based line to hover and ask code actions for        (default 1)
--   LSP_COLUMN   1-based column to hover                               (default 1)
--   LSP_WAIT_MS  how long to wait for each answer and the diagnostics  (default 10000)
-- It opens the file as `cuda-cpp`, waits for the server to initialize, asks for the hover at
-- LINE:COLUMN, the code lenses, and the code actions for the whole of LINE (the range Neovim
-- sends for a line selected in visual-line mode), waits for the file's diagnostics, shuts the
-- server down, and prints one JSON object:
--   { server = { name, capabilities }, hover, codeLens, codeActions, diagnostics, errors, exit }
-- Exit status: 0 when the server answered, 2 when it did not start or initialize.
local env = vim.env
local result = { errors = {} }

local function done(status)
  io.stdout:write(vim.fn.json_encode(result) .. '\n')
  io.stdout:flush()
  vim.cmd(status == 0 and 'qall!' or ('cquit ' .. status))
end

local ok, cmd = pcall(vim.fn.json_decode, env.LSP_CMD or '')
if not ok or type(cmd) ~= 'table' or not env.LSP_FILE then
  table.insert(result.errors, 'LSP_CMD (a JSON array) and LSP_FILE are required')
  return done(2)
end
local file = vim.fn.fnamemodify(env.LSP_FILE, ':p')
local root = vim.fn.fnamemodify(env.LSP_ROOT or vim.fn.fnamemodify(file, ':h'), ':p')
local line = tonumber(env.LSP_LINE or '1') - 1
local column = tonumber(env.LSP_COLUMN or '1') - 1
local wait = tonumber(env.LSP_WAIT_MS or '10000')

vim.cmd('edit ' .. vim.fn.fnameescape(file))
local buffer = vim.api.nvim_get_current_buf()
-- Neovim sends the filetype as the languageId; VS Code calls CUDA `cuda-cpp`.
vim.bo[buffer].filetype = 'cuda-cpp'
local uri = vim.uri_from_bufnr(buffer)

local diagnostics = nil
local client_id = vim.lsp.start_client({
  name = 'cuda-occupancy',
  cmd = cmd,
  root_dir = root,
  workspace_folders = { { uri = vim.uri_from_fname(root), name = 'workspace' } },
  handlers = {
    ['textDocument/publishDiagnostics'] = function(_, params)
      if params and params.uri == uri then diagnostics = params.diagnostics end
    end,
  },
  on_exit = function(code, signal) result.exit = { code = code, signal = signal } end,
})
if not client_id then
  table.insert(result.errors, 'cannot start ' .. cmd[1])
  return done(2)
end
vim.lsp.buf_attach_client(buffer, client_id)

local client
local initialized = vim.wait(wait, function()
  client = vim.lsp.get_client_by_id(client_id)
  return client ~= nil and client.initialized == true
end, 20)
if not initialized then
  table.insert(result.errors, 'the server did not initialize within ' .. wait .. ' ms')
  return done(2)
end
result.server = { name = client.name, capabilities = client.server_capabilities }

local function ask(method, params)
  local answer, err = client.request_sync(method, params, wait, buffer)
  if not answer then
    table.insert(result.errors, method .. ': ' .. tostring(err))
    return vim.NIL
  end
  if answer.err then
    table.insert(result.errors, method .. ': ' .. vim.inspect(answer.err))
    return vim.NIL
  end
  if answer.result == nil then return vim.NIL end
  return answer.result
end

-- The diagnostics first: they come once the server has read the whole file, and so do the
-- figures the hover and the code actions use.
vim.wait(wait, function() return diagnostics ~= nil end, 20)
result.diagnostics = diagnostics or vim.NIL
result.hover = ask('textDocument/hover', { textDocument = { uri = uri }, position = { line = line, character = column } })
result.codeLens = ask('textDocument/codeLens', { textDocument = { uri = uri } })
result.codeActions = ask('textDocument/codeAction', {
  textDocument = { uri = uri },
  range = { start = { line = line, character = 0 }, ['end'] = { line = line + 1, character = 0 } },
  context = { diagnostics = {} },
})

client.stop()
vim.wait(3000, function() return result.exit ~= nil end, 20)
done(0)
