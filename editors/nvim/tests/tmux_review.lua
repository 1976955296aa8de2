-- A person's session, for the tmux test in tests/e2e/nvim.rs: open calc.py and ask Tandem to
-- fix it; the test then reads the screen and presses the review keys itself.
vim.cmd("runtime! plugin/tandem.lua")
local workspace = os.getenv("TANDEM_TEST_WORKSPACE")
require("tandem").setup({
  cmd = { os.getenv("TANDEM_TEST_BIN"), "lsp" },
  provider = { kind = "openai", base_url = os.getenv("TANDEM_TEST_BASE_URL"), model = "scripted" },
  root_dir = workspace,
  env = { TANDEM_LOG = "warn" },
})
-- The statusline item, as a lualine component would show it.
vim.o.statusline = "%f %= %{v:lua.require'tandem'.status()}"
vim.cmd("edit " .. vim.fn.fnameescape(workspace .. "/calc.py"))
vim.cmd("Tandem fix the failing test")
