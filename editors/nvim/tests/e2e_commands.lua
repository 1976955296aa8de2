-- End to end: a project's slash command from Neovim, against the real sidecar (TANDEM_TEST_BIN)
-- and the scripted provider. `:Tandem /<Tab>` completes the commands the sidecar lists; `:Tandem
-- /review calc.py naming` sends the command, which the sidecar expands (tests/e2e/nvim.rs checks
-- the request); the chat shows the command as typed.
return function(H)
  local test, eq = H.test, H.eq

  H.setup_sidecar()

  test("e2e commands: :Tandem /<Tab> completes the project's commands and the built-in ones", function()
    vim.fn.getcompletion("Tandem /", "cmdline")
    H.wait(15000, function()
      return #vim.fn.getcompletion("Tandem /rev", "cmdline") > 0
    end, "the sidecar's command list")
    eq({ "/review" }, vim.fn.getcompletion("Tandem /rev", "cmdline"))
    local all = vim.fn.getcompletion("Tandem /", "cmdline")
    H.truthy(vim.tbl_contains(all, "/context") and vim.tbl_contains(all, "/init"), vim.inspect(all))
    eq({}, vim.fn.getcompletion("Tandem fix /rev", "cmdline"))
  end)

  test("e2e commands: :Tandem /review calc.py naming runs the command", function()
    local chat = require("tandem.chat")
    vim.cmd("Tandem /review calc.py naming")
    H.wait(30000, function()
      return chat.text():find("Reviewed.", 1, true) ~= nil
    end, "the answer in the chat")
    H.truthy(chat.text():find("/review calc.py naming", 1, true), "the command as typed:\n" .. chat.text())
    H.truthy(chat.text():find(".tandem/commands/review.md", 1, true), "the command's card:\n" .. chat.text())
  end)
end
