-- End to end: the model picker, from the real sidecar (TANDEM_TEST_BIN) and the scripted provider
-- (TANDEM_TEST_BASE_URL), which lists gpt-4.1 and gpt-4o-mini besides the configured "scripted".
-- `:TandemModel {name}` before a session and in one, and `:TandemModel` through a stubbed
-- vim.ui.select, each followed by a prompt, then a resume of the session; tests/e2e/nvim.rs checks
-- the model of each request.
return function(H)
  local test, eq = H.test, H.eq
  local tandem = require("tandem")

  H.setup_sidecar()

  local answered = H.answered

  test("e2e model: :TandemModel {name} before a session: the session starts with it", function()
    vim.cmd("TandemModel gpt-4.1")
    eq("gpt-4.1", tandem.state().model)
    eq(nil, tandem.state().session_id)
    answered("hello")
    eq("gpt-4.1", tandem.state().model)
  end)

  test("e2e model: :TandemModel {name} in a session switches its next request; <Tab> completes the listed models", function()
    -- The choices were asked in the background when the session started.
    H.wait(15000, function()
      return #vim.fn.getcompletion("TandemModel gpt-4o", "cmdline") > 0
    end, "the provider's models for the completion")
    eq({ "gpt-4o-mini" }, vim.fn.getcompletion("TandemModel gpt-4o", "cmdline"))
    eq({ "scripted", "gpt-4.1", "gpt-4o-mini" }, vim.fn.getcompletion("TandemModel ", "cmdline"))
    vim.cmd("TandemModel gpt-4o-mini")
    H.wait(15000, function()
      return tandem.state().model == "gpt-4o-mini"
    end, "the sidecar's answer")
    answered("again")
  end)

  test("e2e model: :TandemModel asks with vim.ui.select among the provider's models", function()
    local offered, prompt
    H.replacing(vim.ui, "select", function(items, opts, on_choice)
      prompt = opts.prompt
      offered = vim.tbl_map(opts.format_item, items)
      for _, item in ipairs(items) do
        if item.value == "scripted" then
          on_choice(item)
        end
      end
    end, function()
      vim.cmd("TandemModel")
      H.wait(15000, function()
        return tandem.state().model == "scripted"
      end, "the model chosen in vim.ui.select")
    end)
    eq("Tandem model (now: gpt-4o-mini)", prompt)
    -- The configured model, the session's, then the provider's list.
    eq({ "scripted — the configured model", "gpt-4o-mini  ← current", "gpt-4.1" }, offered)
    answered("once more")
    local info = table.concat(tandem.info(), "\n")
    H.truthy(info:find("model: scripted", 1, true), info)
  end)

  test("e2e model: a resumed session keeps the model chosen in it, and its next request uses it", function()
    vim.cmd("TandemModel gpt-4o-mini")
    H.wait(15000, function()
      return tandem.state().model == "gpt-4o-mini"
    end, "the sidecar's answer")
    local id = tandem.state().session_id
    local chosen = false
    H.replacing(vim.ui, "select", function(items, _, on_choice)
      for _, item in ipairs(items) do
        if item.sessionId == id then
          chosen = true
          on_choice(item)
        end
      end
    end, function()
      vim.cmd("TandemSessions")
      -- The resume forgets the model until the sidecar says the resumed session's.
      H.wait(15000, function()
        return chosen and tandem.state().model ~= nil
      end, "the resumed session's model")
    end)
    eq(id, tandem.state().session_id)
    eq("gpt-4o-mini", tandem.state().model)
    answered("resumed")
  end)
end
