-- End to end: :TandemWorktree with the real sidecar (TANDEM_TEST_BIN) in a git repository
-- (TANDEM_TEST_WORKSPACE) whose worktree `feat` tests/e2e/nvim.rs made and changed: keep.txt
-- changed at its top and bottom, new.txt created, gone.txt deleted.
return function(H)
  local test, eq = H.test, H.eq
  local tandem = require("tandem")
  local worktrees = require("tandem.worktrees")
  local workspace = os.getenv("TANDEM_TEST_WORKSPACE")

  H.setup_sidecar()

  test("e2e :TandemWorktree lists the worktrees with their changes", function()
    local shown
    H.replacing(vim.ui, "select", function(items, opts, on_choice)
      shown = vim.tbl_map(opts.format_item, items)
      on_choice(nil)
    end, function()
      vim.cmd("TandemWorktree")
      H.wait(30000, function()
        return shown ~= nil
      end, "the list of worktrees")
    end)
    eq(1, #shown)
    H.truthy(shown[1]:find("feat  tandem/feat  3 changed file(s)", 1, true), shown[1])
  end)

  test("e2e :TandemWorktree NAME reviews its change inline; only the accepted hunks are written", function()
    vim.cmd("edit " .. vim.fn.fnameescape(workspace .. "/keep.txt"))
    vim.cmd("TandemWorktree feat")
    H.wait(30000, function()
      return tandem.review() ~= nil
    end, "the review of the worktree")
    local review = tandem.review()
    eq("Bring over worktree feat", review.title)
    -- Nothing is written before the answer.
    eq("line 2", vim.fn.readfile(workspace .. "/keep.txt")[2])
    eq(0, vim.fn.filereadable(workspace .. "/new.txt"))
    local keep, other = {}, {}
    for _, hunk in ipairs(review.hunks) do
      if hunk.file:find("keep.txt", 1, true) then
        keep[#keep + 1] = hunk.id
      else
        other[#other + 1] = hunk
      end
    end
    eq(2, #keep)
    -- keep.txt's first hunk and new.txt; not keep.txt's second, not the deletion of gone.txt.
    tandem.accept(keep[1])
    tandem.reject(keep[2])
    for _, hunk in ipairs(other) do
      if hunk.file:find("new.txt", 1, true) then
        tandem.accept(hunk.id)
      else
        tandem.reject(hunk.id)
      end
    end
    H.wait(30000, function()
      return worktrees.last ~= nil
    end, "the end of the review")
    table.sort(worktrees.last.applied)
    eq({ "keep.txt", "new.txt" }, worktrees.last.applied)
    eq({ "new" }, vim.fn.readfile(workspace .. "/new.txt"))
    eq(1, vim.fn.filereadable(workspace .. "/gone.txt"))
    local lines = vim.api.nvim_buf_get_lines(vim.fn.bufnr(workspace .. "/keep.txt"), 0, -1, false)
    eq("line two", lines[2])
    eq("line 19", lines[19])
    H.wait(30000, function()
      return vim.fn.readfile(workspace .. "/keep.txt")[2] == "line two"
    end, "keep.txt saved")
    eq("line 19", vim.fn.readfile(workspace .. "/keep.txt")[19])
  end)

  test("e2e setup's worktree: a new session works in that worktree and :TandemInfo says where", function()
    tandem.config().worktree = "side"
    H.answered("hello")
    local where
    for _, line in ipairs(tandem.info()) do
      if line:find("^worktree: ") then
        where = line
      end
    end
    H.truthy(where and where:find("worktree: side at ", 1, true) and where:find("(branch tandem/side)", 1, true), where)
  end)
end
