-- JSON-RPC over stdio with LSP framing, for the sidecar.
--
-- Neovim's own transport answers a server request with whatever the handler returns, at once
-- (0.7 calls handlers outside any coroutine). A review waits for the person, so this transport
-- lets Tandem's handlers answer later through a `respond` callback. Everything else (the LSP
-- lifecycle, text sync, workspace/applyEdit) goes to the built-in client's dispatchers, so the
-- built-in client stays in charge of buffers and undo.
local M = {}

local uv = vim.loop

--- One LSP frame.
function M.encode(message)
  local body = vim.json.encode(message)
  return string.format("Content-Length: %d\r\n\r\n%s", #body, body)
end

--- A decoder: feed it chunks, it returns the complete bodies so far (strings).
--- Errors on a frame without Content-Length (the stream cannot be resynchronized).
function M.decoder()
  local buffer = ""
  return function(chunk)
    buffer = buffer .. chunk
    local bodies = {}
    while true do
      local header_end = buffer:find("\r\n\r\n", 1, true)
      if not header_end then
        break
      end
      local header = buffer:sub(1, header_end - 1)
      local length = tonumber(header:match("[Cc]ontent%-[Ll]ength:%s*(%d+)"))
      if not length then
        error("tandem: a frame from the sidecar has no Content-Length header: " .. header)
      end
      local body_start = header_end + 4
      if #buffer < body_start + length - 1 then
        break
      end
      bodies[#bodies + 1] = buffer:sub(body_start, body_start + length - 1)
      buffer = buffer:sub(body_start + length)
    end
    return bodies
  end
end

local function environment(extra)
  if not extra then
    return nil
  end
  local env = vim.fn.environ()
  for key, value in pairs(extra) do
    env[key] = value
  end
  local list = {}
  for key, value in pairs(env) do
    list[#list + 1] = key .. "=" .. tostring(value)
  end
  return list
end

--- Starts `cmd` (a list) and returns an RPC object usable as Neovim's (0.7: request, notify,
--- handle, pid; 0.8+: also is_closing, terminate).
---
--- opts.requests[method] = function(params, respond): server requests Tandem answers itself;
---   `respond(result)` or `respond(nil, { code, message })`, now or later.
--- opts.notifications[method] = function(params): server notifications Tandem handles.
--- opts.cwd, opts.env: of the process. opts.on_stderr(line): each stderr line.
function M.start(cmd, dispatchers, opts)
  opts = opts or {}
  dispatchers = dispatchers or {}
  local stdin, stdout, stderr = uv.new_pipe(false), uv.new_pipe(false), uv.new_pipe(false)
  local next_id = 0
  local callbacks = {}
  local closing = false
  local rpc = {}

  local function send(message)
    if closing or stdin:is_closing() then
      return false
    end
    message.jsonrpc = "2.0"
    stdin:write(M.encode(message))
    return true
  end

  local function fail_pending(reason)
    local pending = callbacks
    callbacks = {}
    for _, callback in pairs(pending) do
      callback({ code = -32099, message = reason }, nil)
    end
  end

  local handle, pid_or_err = uv.spawn(cmd[1], {
    args = vim.list_slice(cmd, 2),
    stdio = { stdin, stdout, stderr },
    cwd = opts.cwd,
    env = environment(opts.env),
    detached = false,
  }, function(code, signal)
    closing = true
    stdout:close()
    stderr:close()
    if not stdin:is_closing() then
      stdin:close()
    end
    if rpc.handle and not rpc.handle:is_closing() then
      rpc.handle:close()
    end
    vim.schedule(function()
      fail_pending(string.format("the sidecar exited (code %s, signal %s)", code, signal))
      if dispatchers.on_exit then
        dispatchers.on_exit(code, signal)
      end
    end)
  end)
  if not handle then
    stdin:close()
    stdout:close()
    stderr:close()
    error(string.format("tandem: cannot start %s: %s", table.concat(cmd, " "), tostring(pid_or_err)))
  end
  rpc.handle = handle
  rpc.pid = pid_or_err

  local function respond_to(id)
    local done = false
    return function(result, err)
      if done then
        return
      end
      done = true
      if err then
        send({ id = id, error = err })
      else
        send({ id = id, result = result == nil and vim.NIL or result })
      end
    end
  end

  local function dispatch(message)
    if type(message.method) == "string" and message.id ~= nil then
      local own = opts.requests and opts.requests[message.method]
      if own then
        local respond = respond_to(message.id)
        local ok, err = pcall(own, message.params, respond)
        if not ok then
          respond(nil, { code = -32603, message = tostring(err) })
        end
        return
      end
      local result, err
      if dispatchers.server_request then
        local ok, r, e = pcall(dispatchers.server_request, message.method, message.params)
        if ok then
          result, err = r, e
        else
          err = { code = -32603, message = tostring(r) }
        end
      else
        err = { code = -32601, message = "method not found: " .. message.method }
      end
      respond_to(message.id)(result, err)
    elseif type(message.method) == "string" then
      local own = opts.notifications and opts.notifications[message.method]
      if own then
        own(message.params)
      elseif dispatchers.notification then
        dispatchers.notification(message.method, message.params)
      end
    elseif message.id ~= nil then
      local callback = callbacks[message.id]
      callbacks[message.id] = nil
      if callback then
        callback(message.error, message.result)
      end
    end
  end

  local decode = M.decoder()
  stdout:read_start(function(err, chunk)
    if err or not chunk then
      return
    end
    local ok, bodies = pcall(decode, chunk)
    vim.schedule(function()
      if not ok then
        vim.notify(tostring(bodies), vim.log.levels.ERROR)
        return
      end
      for _, body in ipairs(bodies) do
        local decoded, message = pcall(vim.json.decode, body, { luanil = { object = true } })
        if decoded then
          local handled, handler_err = pcall(dispatch, message)
          if not handled and dispatchers.on_error then
            dispatchers.on_error(-32603, handler_err)
          elseif not handled then
            vim.notify("tandem: " .. tostring(handler_err), vim.log.levels.ERROR)
          end
        else
          vim.notify("tandem: the sidecar sent invalid JSON: " .. body:sub(1, 200), vim.log.levels.ERROR)
        end
      end
    end)
  end)

  local partial = ""
  stderr:read_start(function(err, chunk)
    if err or not chunk or not opts.on_stderr then
      return
    end
    partial = partial .. chunk
    local lines = vim.split(partial, "\n", { plain = true })
    partial = table.remove(lines)
    vim.schedule(function()
      for _, line in ipairs(lines) do
        opts.on_stderr(line)
      end
    end)
  end)

  --- Sends a request; `callback(err, result)`. Returns ok, id.
  function rpc.request(method, params, callback, notify_reply_callback)
    next_id = next_id + 1
    local id = next_id
    if not send({ id = id, method = method, params = params }) then
      return false
    end
    callbacks[id] = function(err, result)
      if notify_reply_callback then
        notify_reply_callback(id)
      end
      if callback then
        callback(err, result)
      end
    end
    return true, id
  end

  function rpc.notify(method, params)
    return send({ method = method, params = params })
  end

  function rpc.is_closing()
    return closing or handle:is_closing()
  end

  function rpc.terminate()
    if not handle:is_closing() then
      handle:kill(15)
    end
  end

  return rpc
end

return M
