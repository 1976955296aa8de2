-- Slash commands for `:Tandem /name args`: the list the sidecar answers `tandem/commands/list`
-- with (`/context`, `/init`, the project's and your own commands) and the completion of `/name`.
-- Pure, so it is unit-tested; the sidecar expands the command when the prompt is sent.
local M = {}

--- The commands of a `tandem/commands/list` result: { { name, description, hint? } }.
function M.from_result(result)
  local out = {}
  for _, command in ipairs(type(result) == "table" and result.commands or {}) do
    if type(command.name) == "string" then
      local hint = type(command.input) == "table" and command.input.hint or nil
      out[#out + 1] = {
        name = command.name,
        description = type(command.description) == "string" and command.description or "",
        hint = type(hint) == "string" and hint or nil,
      }
    end
  end
  return out
end

--- `:Tandem`'s completion: while the first word starts with `/`, the commands whose name starts
--- with what follows it, as `/name`; nothing otherwise (a prompt is free text).
function M.complete(lead, cmdline, commands)
  local args = (cmdline or ""):gsub("^%s*%S+%s*", "", 1)
  if lead:sub(1, 1) ~= "/" or args ~= lead then
    return {}
  end
  local prefix = lead:sub(2)
  local names = {}
  for _, command in ipairs(commands or {}) do
    if command.name:sub(1, #prefix) == prefix then
      names[#names + 1] = "/" .. command.name
    end
  end
  return names
end

return M
