-- The token meter for the statusline, from the sidecar's `usage_update`: how full the context
-- window was at the last request, the session's total, and its estimated cost where the sidecar
-- knows the model's price (list prices, or the ones set in `[provider]`).
local M = {}

--- 950 -> "950", 1234 -> "1.2k", 128000 -> "128k", 1500000 -> "1.5M".
function M.compact(n)
  local function scaled(value, unit)
    if value >= 100 then
      return string.format("%d%s", math.floor(value + 0.5), unit)
    end
    return (string.format("%.1f", value):gsub("%.0$", "")) .. unit
  end
  if n >= 1000000 then
    return scaled(n / 1000000, "M")
  elseif n >= 1000 then
    return scaled(n / 1000, "k")
  end
  return tostring(n)
end

--- "12.3k/128k (10%) Σ 40.5k" for a Usage (see types.lua), or "" without one (or when the
--- provider reported nothing at all).
function M.format(usage)
  if type(usage) ~= "table" or not usage.inputTokens or (usage.inputTokens == 0 and (usage.totalTokens or 0) == 0) then
    return ""
  end
  local window = usage.contextWindow or 0
  local context = M.compact(usage.inputTokens)
  if window > 0 then
    context = string.format("%s/%s (%d%%)", context, M.compact(window), math.floor(usage.inputTokens / window * 100 + 0.5))
  end
  local cost = type(usage.session) == "table" and type(usage.session.costUsd) == "number" and usage.session.costUsd
  local money = cost and (" " .. M.dollars(cost)) or ""
  -- 0 prompt tokens: the provider did not say; the session's total is still known.
  if usage.inputTokens == 0 then
    return "Σ " .. M.compact(usage.totalTokens or 0) .. money
  end
  return string.format("%s Σ %s%s", context, M.compact(usage.totalTokens or 0), money)
end

--- 0.004 -> "$0.004", 0.1234 -> "$0.12", 12.5 -> "$12.50".
function M.dollars(usd)
  if usd <= 0 then
    return "$0"
  elseif usd < 0.01 then
    return "$" .. (string.format("%.1g", usd))
  end
  return string.format("$%.2f", usd)
end

return M
