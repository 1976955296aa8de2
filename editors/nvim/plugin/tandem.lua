-- Tandem's commands. The sidecar starts on the first one (see :help tandem).
if vim.g.loaded_tandem then
  return
end
if vim.fn.has("nvim-0.7") == 0 then
  vim.api.nvim_err_writeln("tandem: Neovim 0.7 or later is needed")
  return
end
vim.g.loaded_tandem = 1

local function command(name, opts)
  opts.desc = opts.desc or ("Tandem: " .. name)
  vim.api.nvim_create_user_command(name, function(args)
    require("tandem").commands[name](args)
  end, opts)
end

command("Tandem", {
  nargs = "*",
  range = true,
  desc = "Tandem: ask (with a range: the selection is attached); /name runs a command",
  complete = function(lead, cmdline)
    return require("tandem").complete_prompt(lead, cmdline)
  end,
})
command("TandemAdd", {
  nargs = 0,
  range = true,
  bang = true,
  desc = "Tandem: add the file (with a range: the lines) to the next prompt; ! drops what was added",
})
command("TandemAttach", {
  nargs = "?",
  complete = "file",
  desc = "Tandem: attach an image (the current buffer's file, or the one named) to the next prompt",
})
command("TandemChat", { nargs = 0, desc = "Tandem: open the chat" })
command("TandemCancel", { nargs = 0, bang = true, desc = "Tandem: stop the running turn; ! drops the queued prompts" })
command("TandemMode", {
  nargs = "?",
  desc = "Tandem: set the permission mode",
  complete = function(lead)
    return vim.tbl_filter(function(mode)
      return mode:sub(1, #lead) == lead
    end, require("tandem.config").modes)
  end,
})
command("TandemModel", {
  nargs = "?",
  desc = "Tandem: choose the session's model (without a name: from the provider's list)",
  complete = function(lead)
    return require("tandem").complete_model(lead)
  end,
})
command("TandemSessions", {
  nargs = "*",
  bang = true,
  desc = "Tandem: list and resume sessions (words filter them; ! deletes the chosen one)",
})
command("TandemCheckpoints", { nargs = 0, desc = "Tandem: list the session's checkpoints and restore one" })
command("TandemUndo", { nargs = 0, desc = "Tandem: restore the files to before the last turn" })
command("TandemRedo", { nargs = 0, desc = "Tandem: bring back what the last restore undid" })
command("TandemCompact", { nargs = 0, desc = "Tandem: compact the conversation (tokens before and after)" })
command("TandemWorktree", {
  nargs = "?",
  desc = "Tandem: list the agents' worktrees and review one's change (with NAME: that one)",
  complete = function(lead)
    return require("tandem.worktrees").complete(lead)
  end,
})
command("TandemSetup", { nargs = 0, desc = "Tandem: choose the model provider (.tandem/config.toml) and run tandem doctor" })
command("TandemInfo", { nargs = 0, desc = "Tandem: sidecar, session and configuration" })

require("tandem")._init()
