-- The live indicator of a running turn: how long it has run and about how many tokens the model
-- has streamed (its answer and its reasoning, counted as characters / 4 while they stream; the
-- provider's own count comes with the token meter when each request ends). Pure.
local M = {}

--- A new turn's progress: { started (ms), chars }.
function M.start(now_ms)
  return { started = now_ms, chars = 0 }
end

--- Counts a streamed chunk of the model's (other updates leave it as it is).
function M.count(progress, update)
  if type(progress) ~= "table" or type(update) ~= "table" then
    return
  end
  local kind = update.sessionUpdate
  if kind ~= "agent_message_chunk" and kind ~= "agent_thought_chunk" then
    return
  end
  local content = update.content
  if type(content) == "table" and content.type == "text" and type(content.text) == "string" then
    progress.chars = progress.chars + vim.fn.strchars(content.text)
  end
end

--- 7500 -> "7s", 65000 -> "1m 05s".
function M.elapsed(ms)
  local seconds = math.max(0, math.floor(ms / 1000))
  if seconds < 60 then
    return seconds .. "s"
  end
  return string.format("%dm %02ds", math.floor(seconds / 60), seconds % 60)
end

--- "Waiting for the model… 12s" before the first token, then "Working… 1m 05s · ~341 tokens";
--- "Waiting for your review… 40s · ~341 tokens" while the turn waits for the person (`waiting`).
function M.label(progress, now_ms, waiting)
  local elapsed = M.elapsed(now_ms - progress.started)
  local tokens = ""
  if progress.chars > 0 then
    tokens = string.format(" · ~%s tokens", require("tandem.usage").compact(math.ceil(progress.chars / 4)))
  end
  if waiting then
    return string.format("Waiting for %s… %s%s", waiting, elapsed, tokens)
  end
  if progress.chars == 0 then
    return "Waiting for the model… " .. elapsed
  end
  return string.format("Working… %s%s", elapsed, tokens)
end

--- The statusline's short form: "12s ~341 tok" (nil without progress).
function M.short(progress, now_ms)
  if type(progress) ~= "table" then
    return nil
  end
  local elapsed = M.elapsed(now_ms - progress.started)
  if progress.chars == 0 then
    return elapsed
  end
  return string.format("%s ~%s tok", elapsed, require("tandem.usage").compact(math.ceil(progress.chars / 4)))
end

return M
