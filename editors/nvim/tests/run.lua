-- Runs the plugin's tests: `nvim --headless -u NONE -i NONE --cmd 'set rtp+=editors/nvim'
-- -c 'luafile editors/nvim/tests/run.lua'`. The end-to-end tests run when TANDEM_TEST_BIN
-- (the tandem binary), TANDEM_TEST_BASE_URL (the scripted provider) and TANDEM_TEST_WORKSPACE
-- are set (tests/e2e/nvim.rs sets them); TANDEM_TEST_E2E names another end-to-end file
-- (`e2e_checkpoints`). Exit status 0 only if every test passed.
local dir = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h")
local H = dofile(dir .. "/harness.lua")
-- plugin/ is not sourced before -c commands run under -u NONE on every version: load it here.
vim.cmd("runtime! plugin/tandem.lua")

dofile(dir .. "/unit.lua")(H)
if os.getenv("TANDEM_TEST_BIN") then
  dofile(dir .. "/" .. (os.getenv("TANDEM_TEST_E2E") or "e2e") .. ".lua")(H)
else
  H.log("(end-to-end tests not run: TANDEM_TEST_BIN is not set)")
end

local ok = H.run()
local client = require("tandem.client")
client.stop()
vim.wait(3000, function()
  return not client.running()
end, 20)
if ok then
  vim.cmd("qa!")
else
  vim.cmd("cq")
end
