-- The model picker's data (:TandemModel): the `model` option of a `tandem/session/configOptions`
-- (or `setConfigOption`) result. Its choices are the configured model, the session's, then the
-- models the provider lists; `modelsError` says why the provider's list could not be read. Pure,
-- so it is unit-tested.
local M = {}

--- The model option of a configOptions result: { current, choices = { { value, name,
--- description? } }, error? }, or nil when the sidecar offers none. The current model is always
--- one of the choices.
function M.from_result(result)
  for _, option in ipairs(type(result) == "table" and result.configOptions or {}) do
    if option.id == "model" then
      local choices = {}
      local current_listed = false
      for _, choice in ipairs(option.options or {}) do
        local description = choice.description
        if description == vim.NIL then
          description = nil
        end
        choices[#choices + 1] = { value = choice.value, name = choice.name or choice.value, description = description }
        current_listed = current_listed or choice.value == option.currentValue
      end
      if not current_listed then
        table.insert(choices, 1, { value = option.currentValue, name = option.currentValue })
      end
      local err = result.modelsError
      if type(err) ~= "string" or vim.trim(err) == "" then
        err = nil
      end
      return { current = option.currentValue, choices = choices, error = err }
    end
  end
  return nil
end

--- How vim.ui.select shows `choice`: its name, the id when that differs, what it is, and a mark
--- on the current one: "Claude Sonnet 4.5 (claude-sonnet-4-5) — the configured model  ← current".
function M.label(choice, current)
  local text = choice.name
  if choice.value ~= choice.name then
    text = string.format("%s (%s)", text, choice.value)
  end
  if choice.description then
    text = text .. " — " .. choice.description
  end
  if choice.value == current then
    text = text .. "  ← current"
  end
  return text
end

--- The names :TandemModel completes `lead` with: the choices known (`models`, else `known`, a list
--- of names), each once, in order.
function M.complete(lead, models, known)
  local names, seen = {}, {}
  local values = {}
  for _, choice in ipairs(models and models.choices or {}) do
    values[#values + 1] = choice.value
  end
  vim.list_extend(values, known or {})
  for _, value in ipairs(values) do
    if type(value) == "string" and not seen[value] and value:sub(1, #lead) == lead then
      seen[value] = true
      names[#names + 1] = value
    end
  end
  return names
end

return M
