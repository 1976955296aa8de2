-- A person's session, for the tmux tests in tests/e2e/nvim.rs: open calc.py (or
-- TANDEM_TEST_FILE) and ask Tandem to fix it (or TANDEM_TEST_PROMPT); the test then reads the
-- screen and presses the review keys itself.
vim.cmd("runtime! plugin/tandem.lua")
local workspace = os.getenv("TANDEM_TEST_WORKSPACE")
require("tandem").setup({
  cmd = { os.getenv("TANDEM_TEST_BIN"), "lsp" },
  provider = { kind = "openai", base_url = os.getenv("TANDEM_TEST_BASE_URL"), model = "scripted" },
  root_dir = workspace,
  env = { TANDEM_LOG = "warn" },
})
if os.getenv("TANDEM_TEST_FORMATTER") then
  -- A formatter on save: a header line at the top of every Python file that lacks it.
  vim.api.nvim_create_autocmd("BufWritePre", {
    pattern = "*.py",
    callback = function(args)
      if vim.api.nvim_buf_get_lines(args.buf, 0, 1, false)[1] ~= "# formatted" then
        vim.api.nvim_buf_set_lines(args.buf, 0, 0, false, { "# formatted" })
      end
    end,
  })
end
-- The statusline item, as a lualine component would show it.
vim.o.statusline = "%f %= %{v:lua.require'tandem'.status()}"
vim.cmd("edit " .. vim.fn.fnameescape(workspace .. "/" .. (os.getenv("TANDEM_TEST_FILE") or "calc.py")))
vim.cmd("Tandem " .. (os.getenv("TANDEM_TEST_PROMPT") or "fix the failing test"))
