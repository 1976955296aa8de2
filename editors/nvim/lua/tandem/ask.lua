-- Questions the sidecar asks the person outside a diff review: command (and MCP tool)
-- approvals through vim.ui.select, and `tandem/session/askUser` through vim.ui.select /
-- vim.ui.input. Dismissing an approval rejects it; dismissing a question cancels the questions.
local M = {
  -- Approvals and questions waiting for the person (the statusline says "question").
  waiting = 0,
}

--- `respond` that also counts the question as answered.
local function counted(respond)
  M.waiting = M.waiting + 1
  local done = false
  return function(result)
    if not done then
      done = true
      M.waiting = M.waiting - 1
    end
    respond(result)
  end
end

local function content_text(content)
  return require("tandem.content").text(content, "change to ")
end

--- The prompt shown for a permission request: the title, then the command and the verdict.
function M.permission_prompt(params)
  local tool_call = params.toolCall or {}
  local text = content_text(tool_call.content)
  local prompt = "Tandem: " .. (tool_call.title or "permission")
  if text ~= "" then
    prompt = prompt .. "\n" .. text
  end
  return prompt .. "\n"
end

--- Asks with vim.ui.select; respond(result) with the chosen option (dismissed: the reject option).
function M.permission(params, respond)
  respond = counted(respond)
  local options = params.options or {}
  local reject = nil
  for _, option in ipairs(options) do
    if option.kind == "reject_once" or option.kind == "reject_always" then
      reject = reject or option
    end
  end
  vim.ui.select(options, {
    prompt = M.permission_prompt(params),
    kind = "tandem.permission",
    format_item = function(option)
      return option.name
    end,
  }, function(choice)
    choice = choice or reject
    if choice then
      require("tandem.chat").note(string.format("%s: %s", params.toolCall and params.toolCall.title or "permission", choice.name))
      respond({ outcome = { outcome = "selected", optionId = choice.optionId } })
    else
      respond({ outcome = { outcome = "cancelled" } })
    end
  end)
end

local function option_text(option)
  if option.description and option.description ~= "" then
    return option.label .. " - " .. option.description
  end
  return option.label
end

--- `tandem/session/askUser`: each question in turn; respond({ answers }) or ({ cancelled = true }).
function M.ask_user(params, respond)
  respond = counted(respond)
  local questions = params.questions or {}
  local answers = {}
  local function ask(i)
    if i > #questions then
      respond({ answers = answers })
      return
    end
    local q = questions[i]
    local title = (q.header and q.header ~= "" and (q.header .. ": ") or "") .. (q.question or "")
    local options = q.options or {}
    if #options > 0 and not q.multiSelect then
      vim.ui.select(options, { prompt = title, kind = "tandem.ask", format_item = option_text }, function(choice)
        if not choice then
          respond({ cancelled = true })
          return
        end
        answers[i] = { choice.label }
        ask(i + 1)
      end)
    else
      local hint = ""
      if #options > 0 then
        hint = " (" .. table.concat(vim.tbl_map(function(o)
          return o.label
        end, options), ", ") .. "; separate several with commas)"
      end
      vim.ui.input({ prompt = title .. hint .. " " }, function(text)
        if text == nil then
          respond({ cancelled = true })
          return
        end
        local picked = {}
        if #options > 0 then
          for part in text:gmatch("[^,]+") do
            picked[#picked + 1] = vim.trim(part)
          end
        else
          picked = { text }
        end
        answers[i] = picked
        ask(i + 1)
      end)
    end
  end
  ask(1)
end

return M
