-- The text of a tool call's content items (ACP shapes): text blocks as they are, a diff as
-- `<diff_label><path>`. Shared by the chat buffer and the approval prompts.
local M = {}

function M.text(content, diff_label)
  local lines = {}
  for _, item in ipairs(content or {}) do
    if item.type == "content" and item.content and item.content.type == "text" then
      lines[#lines + 1] = item.content.text
    elseif item.type == "diff" then
      lines[#lines + 1] = diff_label .. tostring(item.path)
    end
  end
  return table.concat(lines, "\n")
end

return M
