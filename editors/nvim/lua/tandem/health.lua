-- :checkhealth tandem (Neovim 0.8+).
local M = {}

function M.check()
  local health = vim.health or require("health")
  local start = health.start or health.report_start
  local ok = health.ok or health.report_ok
  local warn = health.warn or health.report_warn
  local error = health.error or health.report_error
  local info = health.info or health.report_info

  start("tandem")
  local v = vim.version()
  ok(string.format("Neovim %d.%d.%d", v.major, v.minor, v.patch))
  local tandem = require("tandem")
  local resolved, config = pcall(tandem.config)
  if not resolved then
    error("setup(): " .. tostring(config))
    return
  end
  local status_ok, lines = pcall(tandem.info)
  local cmd = config.cmd
  if vim.fn.executable(cmd[1]) == 1 then
    ok("sidecar: " .. vim.fn.exepath(cmd[1]))
    local version = vim.fn.system({ cmd[1], "--version" })
    if vim.v.shell_error == 0 then
      ok(vim.trim(version))
    else
      warn("`" .. cmd[1] .. " --version` failed: " .. vim.trim(version))
    end
  else
    error("`" .. cmd[1] .. "` is not executable", { "Install it (cargo install --path server/tandem) or set `cmd` in setup()" })
  end
  if status_ok then
    for _, line in ipairs(lines) do
      info(line)
    end
  end
end

return M
