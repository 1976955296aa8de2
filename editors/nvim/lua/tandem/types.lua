-- Generated from server/protocol/schema/protocol.schema.json by server/protocol/tests/client_types.rs.
-- Do not edit: regenerate with `UPDATE_EXPECT=1 cargo test -p tandem-protocol`.
-- Type annotations for lua-language-server only: nothing here runs.
---@meta

--- A choice.
---@class tandem.AskOption
---@field description? string What it means.
---@field label string Label, returned as the answer.

--- One question.
---@class tandem.AskQuestion
---@field header? string A short label for it.
---@field multiSelect? boolean Whether several options may be chosen.
---@field options? tandem.AskOption[] Choices; empty for a free-form answer (the answer is then the typed text).
---@field question string The question.

--- `tandem/session/askUser` params: questions for the person.
---@class tandem.AskUserParams
---@field questions tandem.AskQuestion[] The questions (1-4).
---@field sessionId string Session.

--- `tandem/session/askUser` result: `answers` (one list of labels per question) or `cancelled`.
---@class tandem.AskUserResult
---@field answers? string[][]|nil One list of chosen labels (or the typed text) per question.
---@field cancelled? boolean|nil The person dismissed the questions.

--- A slash command.
---@class tandem.AvailableCommand
---@field description string What it does.
---@field input? tandem.AvailableCommandInput|nil What to type after the name (ACP's `input`), when it takes arguments.
---@field name string Name without the slash.

--- The arguments a slash command takes.
---@class tandem.AvailableCommandInput
---@field hint string A hint shown while typing them (`<file> [focus]`).

--- One checkpoint.
---@class tandem.CheckpointInfo
---@field files? string[] Files that changed between this checkpoint and the next one (what the tool call, the restore or, after a turn, the person changed then), workspace-relative.
---@field id integer Its id in the session (from 1).
---@field kind tandem.CheckpointKind What was about to happen.
---@field skipped? string[] Files the snapshot left out (over the size cap).
---@field time string When, RFC 3339.
---@field tool? string|nil Its tool.
---@field toolCallId? string|nil The tool call about to run or that ended (`beforeTool`, `afterTool`).
---@field turn integer The session's turn (from 1).

--- What was about to happen when a checkpoint was taken.
---@alias tandem.CheckpointKind "beforeTurn"|"beforeTool"|"afterTool"|"afterTurn"|"beforeRestore"|"afterRestore"

--- Params of `tandem/commands/list`.
---@class tandem.CommandsListParams
---@field cwd? string|nil The working directory whose commands to list (default: the workspace root).

--- Result of `tandem/commands/list`.
---@class tandem.CommandsListResult
---@field commands tandem.AvailableCommand[] The commands, the built-in ones first; a custom command of a built-in name is not listed.

--- A choice of a [`ConfigOption`].
---@class tandem.ConfigChoice
---@field description? string|nil More about it.
---@field name string Its name for people.
---@field value string What to send as `value`.

--- One setting of a session, with its choices (ACP's `SessionConfigOption`, `select` kind).
---@class tandem.ConfigOption
---@field category string `mode` or `model` (ACP's categories, which clients use to place the control).
---@field currentValue string The choice in force.
---@field description string What it changes.
---@field id string `mode` or `model`.
---@field name string Its name for people.
---@field options tandem.ConfigChoice[] The choices.
---@field type string Always `select`.

--- Plain text (Markdown).
---@class tandem.ContentBlock.text
---@field text string The text.
---@field type "text"

--- A link to a file or resource the agent may read.
---@class tandem.ContentBlock.resource_link
---@field mimeType? string|nil MIME type.
---@field name string Display name.
---@field type "resource_link"
---@field uri string URI, usually `file:///...`.

--- A resource with its content (e.g. a selection the person attached).
---@class tandem.ContentBlock.resource
---@field resource tandem.EmbeddedResource The resource.
---@field type "resource"

--- An image (a pasted screenshot, an image file): PNG, JPEG, GIF or WebP, sent to a model
--- that takes images (resized to the provider's limits), refused for one that does not.
---@class tandem.ContentBlock.image
---@field data? string The image's bytes, base64. May be empty when `uri` names a local file (`file:///…`): Tandem then reads the file.
---@field mimeType string `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
---@field type "image"
---@field uri? string|nil Where the image came from (`file:///…`), shown with it.

--- A piece of a prompt or of a message.
---@alias tandem.ContentBlock tandem.ContentBlock.text|tandem.ContentBlock.resource_link|tandem.ContentBlock.resource|tandem.ContentBlock.image

--- What the whole change (every hunk applied) would do to the diagnostics of the files it
--- touches and of the other files the servers report on.
---@class tandem.DiagnosticsPreview
---@field files tandem.FileDiagnosticsPreview[] One entry per file a server reported on: the changed files, and other files whose diagnostics the change alters (a renamed function's callers).
---@field status tandem.PreviewStatus `ready` when every server answered for every file in time; `partial` when some did not (see each file); `notReady` when none did: then nothing is known about errors.
---@field summary string For the person: `introduces 2 errors: … / resolves 1`, or why nothing is known.

--- Params of `tandem/document/save`.
---@class tandem.DocumentSaveParams
---@field uri string The document to save.

--- Result of `tandem/document/save`.
---@class tandem.DocumentSaveResult
---@field saved boolean Whether the editor saved it; when false the server writes the file itself.

--- The content of an embedded resource.
---@class tandem.EmbeddedResource
---@field mimeType? string|nil MIME type.
---@field text string Its text.
---@field uri string URI of the resource.

--- One file of a preview.
---@class tandem.FileDiagnosticsPreview
---@field changed boolean `true` for a file of the change; `false` for another file whose diagnostics it alters.
---@field introduced? tandem.PreviewDiagnostic[] Errors and warnings the change would add (positions in the proposed text).
---@field path string Absolute path.
---@field reason? string|nil Why the file is not ready.
---@field resolved? tandem.PreviewDiagnostic[] Errors and warnings the change would remove (positions in the current text).
---@field server? string|nil The language server that answered (or was asked).
---@field status tandem.PreviewStatus `ready` or `notReady` (never `partial`).

--- A hunk offered for review.
---@class tandem.HunkInfo
---@field fuzz? integer|nil Context lines of the patch hunk behind this change that were left unchecked to place it (`patch -F`; absent when none were).
---@field id string Id to name in `acceptedHunks`.
---@field newLines integer New lines covered.
---@field newStart integer First new line (1-based).
---@field oldLines integer Old lines covered.
---@field oldStart integer First old line (1-based).
---@field patch string The hunk as unified-diff text, `@@` header included.

--- `initializationOptions` of `initialize`.
---@class tandem.InitializationOptions
---@field mode? tandem.ModeId|nil Starting permission mode.
---@field permissions? tandem.PermissionRules|nil Permission rules from the editor's settings, added to those of the configuration files.
---@field profile? string|nil Tool profile: minimal, standard, full or custom.
---@field provider? tandem.ProviderConfig|nil Model provider.

--- Permission modes of a session.
---@alias tandem.ModeId "default"|"auto-edit"|"plan"|"yolo"

--- A mode as shown to people.
---@class tandem.ModeInfo
---@field description string What it allows.
---@field id tandem.ModeId Mode id.
---@field name string Short name.

--- A choice in a permission request.
---@class tandem.PermissionOption
---@field kind tandem.PermissionOptionKind Kind.
---@field name string Label.
---@field optionId string Id to answer with.

--- Kinds of permission choices (ACP).
---@alias tandem.PermissionOptionKind "allow_once"|"allow_always"|"reject_once"|"reject_always"

--- An option was chosen.
---@class tandem.PermissionOutcome.selected
---@field acceptedHunks? string[]|nil For edits: the hunks accepted; absent means all.
---@field message? string|nil Optional words for the model (why it was rejected).
---@field optionId string Its id.
---@field outcome "selected"

--- The request was cancelled.
---@class tandem.PermissionOutcome.cancelled
---@field outcome "cancelled"

--- The person's answer.
---@alias tandem.PermissionOutcome tandem.PermissionOutcome.selected|tandem.PermissionOutcome.cancelled

--- Permission rules (`tool(specifier)` patterns, as in `[permissions]` of `config.toml`).
---@class tandem.PermissionRules
---@field allow? string[] Calls that run without asking (`bash(npm test:*)`, `edit(src/**)`).
---@field ask? string[] Calls that ask every time.
---@field deny? string[] Calls that never run.

--- An entry of the plan.
---@class tandem.PlanEntry
---@field content string What to do.
---@field priority string `high`, `medium` or `low`.
---@field status string `pending`, `in_progress` or `completed`.

--- One diagnostic of a preview. Lines and columns are 1-based; columns count Unicode scalar
--- values.
---@class tandem.PreviewDiagnostic
---@field code? string|nil The server's code for it.
---@field column integer Start column.
---@field endColumn integer End column (exclusive).
---@field endLine integer End line.
---@field hunk? string|nil The hunk (`HunkInfo.id`) whose lines hold it: new lines for an introduced diagnostic, old lines for a resolved one. Absent outside every hunk and in other files.
---@field line integer Start line.
---@field message string What the server says.
---@field severity tandem.PreviewSeverity How bad.
---@field source? string|nil Who reported it (`Pylance`, `rustc`, ...).

--- Severity of a previewed diagnostic (only errors and warnings are previewed).
---@alias tandem.PreviewSeverity "error"|"warning"

--- How complete a preview is.
---@alias tandem.PreviewStatus "ready"|"partial"|"notReady"

--- A model provider, as the editor or config file names it.
---@class tandem.ProviderConfig
---@field apiKeyEnv? string|nil Name of the environment variable that holds the API key.
---@field baseUrl? string|nil Base URL, e.g. `http://127.0.0.1:11434/v1`.
---@field kind? string|nil `openai` (Chat Completions wire format) or `anthropic` (Messages).
---@field model? string|nil Model name.

--- `tandem/session/requestPermission` params.
---@class tandem.RequestPermissionParams
---@field diagnostics? tandem.DiagnosticsPreview|nil For a change to files: what it would do to the language servers' diagnostics (absent when no server serves its files, or for commands and other calls).
---@field options tandem.PermissionOption[] Choices.
---@field sessionId string Session.
---@field toolCall tandem.ToolCallUpdate The call that waits, with its diff or command.

--- `tandem/session/requestPermission` result.
---@class tandem.RequestPermissionResult
---@field outcome tandem.PermissionOutcome The answer.

--- `tandem/session/cancel` params (a notification).
---@class tandem.SessionCancelParams
---@field sessionId string Session.

--- `tandem/session/checkpointFile` params: one file's text at a checkpoint (to compare it with
--- the file now).
---@class tandem.SessionCheckpointFileParams
---@field checkpointId integer The checkpoint.
---@field path string The file: workspace-relative, or absolute inside the workspace.
---@field sessionId string The session.

--- `tandem/session/checkpointFile` result.
---@class tandem.SessionCheckpointFileResult
---@field content? string|nil The file's text at the checkpoint; absent when the checkpoint does not hold the file (it did not exist then).

--- `tandem/session/checkpoints` params.
---@class tandem.SessionCheckpointsParams
---@field sessionId string The session.

--- `tandem/session/checkpoints` result, oldest first.
---@class tandem.SessionCheckpointsResult
---@field checkpoints tandem.CheckpointInfo[] The checkpoints.

--- `tandem/session/compact` params.
---@class tandem.SessionCompactParams
---@field sessionId string Session.

--- `tandem/session/compact` result.
---@class tandem.SessionCompactResult
---@field summarized boolean Whether older turns were replaced by a summary the model wrote (else only old tool outputs were elided, or there was nothing to shorten).
---@field tokensAfter integer Estimated tokens after.
---@field tokensBefore integer Estimated tokens of the conversation before.

--- `tandem/session/configOptions` params.
---@class tandem.SessionConfigOptionsParams
---@field sessionId string Session.

--- `tandem/session/configOptions` and `tandem/session/setConfigOption` result.
---@class tandem.SessionConfigOptionsResult
---@field configOptions tandem.ConfigOption[] The session's settings, the mode first.
---@field modelsError? string|nil Why the provider's model list could not be read (the model choices are then only the configured model and the session's).

--- `tandem/session/delete` params (the result is `{}`).
---@class tandem.SessionDeleteParams
---@field sessionId string The stored session to delete.

--- A stored session.
---@class tandem.SessionInfo
---@field cwd string Working directory.
---@field sessionId string Id.
---@field title? string|nil The first prompt, shortened.
---@field updatedAt? string|nil Last change, RFC 3339.

--- `tandem/session/list` params.
---@class tandem.SessionListParams
---@field cursor? string|nil Continue after this cursor (from `nextCursor`).
---@field cwd? string|nil Only sessions whose working directory is this one.

--- `tandem/session/list` result, most recent first.
---@class tandem.SessionListResult
---@field nextCursor? string|nil Cursor for the next page.
---@field sessions tandem.SessionInfo[] Sessions.

--- `tandem/session/load` params: the history is replayed as `tandem/session/update`s before
--- the result is sent.
---@class tandem.SessionLoadParams
---@field cwd? string|nil Working directory (ignored when it is the stored one).
---@field mcpServers? any MCP servers (ACP shape).
---@field sessionId string Session to load.

--- `tandem/session/load` result.
---@class tandem.SessionLoadResult
---@field modes tandem.SessionModes Its modes.

--- The modes of a session.
---@class tandem.SessionModes
---@field available tandem.ModeInfo[] Every mode.
---@field current tandem.ModeId The mode in force.

--- `tandem/session/new` params.
---@class tandem.SessionNewParams
---@field cwd? string|nil Working directory (absolute, inside the workspace); default: the workspace root.
---@field mcpServers? any MCP servers the editor wants the session to use (ACP shape).
---@field mode? tandem.ModeId|nil Starting mode; default: the configured mode.
---@field model? string|nil Model; default: the configured model.
---@field worktree? string|nil Work in the agent worktree of this name (a git worktree on the branch `tandem/NAME`, outside the working tree), created or reused as `tandem run --worktree NAME` does; `cwd` is then ignored.

--- `tandem/session/new` result.
---@class tandem.SessionNewResult
---@field model? string|nil The model it uses.
---@field modes tandem.SessionModes Its modes.
---@field sessionId string The new session's id.
---@field worktree? tandem.WorktreePlace|nil Where it works, when it was asked to work in a worktree.

--- `tandem/session/update` params.
---@class tandem.SessionNotification
---@field sessionId string Session.
---@field update tandem.SessionUpdate What happened.

--- `tandem/session/prompt` params.
---@class tandem.SessionPromptParams
---@field prompt tandem.ContentBlock[] What the person wrote and attached.
---@field sessionId string Session.

--- `tandem/session/prompt` result, sent when the turn ends.
---@class tandem.SessionPromptResult
---@field error? string|nil With `error`: what failed and what to do.
---@field stopReason tandem.StopReason Why the turn ended.

--- `tandem/session/restore` params: exactly one of `checkpointId`, `turn` and `toolCallId`.
---@class tandem.SessionRestoreParams
---@field checkpointId? integer|nil Back to this checkpoint's state.
---@field dryRun? boolean Only say what would change (the diff), change nothing.
---@field includeConflicts? boolean Also restore the files the person changed after the checkpoint (left alone by default).
---@field sessionId string The session.
---@field toolCallId? string|nil Undo only what this tool call changed.
---@field turn? integer|nil Back to the state before this turn (`1`: the start of the session).

--- `tandem/session/restore` result.
---@class tandem.SessionRestoreResult
---@field conflicts string[] Files the person changed after the checkpoint: left alone unless `includeConflicts`.
---@field diff string The change as a unified diff (current → restored).
---@field message string What the restore did, in words (the review's outcome included).
---@field notCovered? string[] Files the agent changed or removed after the checkpoint that checkpoints leave out (over the size cap, ignored): not covered by undo, so no restore can bring them back.
---@field redoCheckpointId? integer|nil The checkpoint holding the state before this restore: restoring it is the redo.
---@field restored string[] Files restored (or, with `dryRun`, that would be).
---@field skipped string[] Files not restored: the checkpoint does not hold them (over the size cap), they are not text, or they are now a symbolic link or inside one (a restore never reads or writes through a link).

--- `tandem/session/setConfigOption` params.
---@class tandem.SessionSetConfigOptionParams
---@field configId string `mode` or `model`.
---@field sessionId string Session.
---@field value string One of the option's choices (a model the provider does not list is accepted too: some providers list only part of what they serve).

--- `tandem/session/setMode` params.
---@class tandem.SessionSetModeParams
---@field modeId tandem.ModeId New mode.
---@field sessionId string Session.

--- Streamed answer text.
---@class tandem.SessionUpdate.agent_message_chunk
---@field content tandem.ContentBlock The chunk.
---@field sessionUpdate "agent_message_chunk"

--- Streamed reasoning.
---@class tandem.SessionUpdate.agent_thought_chunk
---@field content tandem.ContentBlock The chunk.
---@field sessionUpdate "agent_thought_chunk"

--- The person's prompt (replayed by `load`).
---@class tandem.SessionUpdate.user_message_chunk
---@field content tandem.ContentBlock The chunk.
---@field messageId? string|nil The prompt this chunk belongs to: all chunks of one prompt share it, a new id starts the next prompt (ACP's `messageId`). A replay sets it, so a prompt that got no answer (a cancelled one) stays apart from the next.
---@field sessionUpdate "user_message_chunk"

--- A new tool call.
---@class tandem.SessionUpdate.tool_call: tandem.ToolCall
---@field sessionUpdate "tool_call"

--- A change to a tool call.
---@class tandem.SessionUpdate.tool_call_update: tandem.ToolCallUpdate
---@field sessionUpdate "tool_call_update"

--- The agent's plan (from `todowrite`).
---@class tandem.SessionUpdate.plan
---@field entries tandem.PlanEntry[] Entries in order.
---@field sessionUpdate "plan"

--- The session's mode changed.
---@class tandem.SessionUpdate.current_mode_update
---@field currentModeId tandem.ModeId The new mode.
---@field sessionUpdate "current_mode_update"

--- Slash commands the session offers.
---@class tandem.SessionUpdate.available_commands_update
---@field availableCommands tandem.AvailableCommand[] Commands.
---@field sessionUpdate "available_commands_update"

--- Token use.
---@class tandem.SessionUpdate.usage_update: tandem.Usage
---@field sessionUpdate "usage_update"

--- One step of a session, discriminated by `sessionUpdate`.
---@alias tandem.SessionUpdate tandem.SessionUpdate.agent_message_chunk|tandem.SessionUpdate.agent_thought_chunk|tandem.SessionUpdate.user_message_chunk|tandem.SessionUpdate.tool_call|tandem.SessionUpdate.tool_call_update|tandem.SessionUpdate.plan|tandem.SessionUpdate.current_mode_update|tandem.SessionUpdate.available_commands_update|tandem.SessionUpdate.usage_update

--- Why a turn ended.
---@alias tandem.StopReason "end_turn"|"cancelled"|"max_turns"|"refusal"|"max_tokens"|"error"

--- `capabilities.experimental.tandem` in the `initialize` result.
---@class tandem.TandemCapabilities
---@field modes tandem.ModeId[] Available modes.
---@field tools string[] Names of the enabled tools.
---@field version string Protocol version.

--- A tool call as the editor shows it.
---@class tandem.ToolCall
---@field content? tandem.ToolCallContent[] What it produced or proposes.
---@field kind tandem.ToolKind Kind.
---@field locations? tandem.ToolCallLocation[] Files it touches.
---@field rawInput? any The arguments as the model sent them.
---@field status tandem.ToolCallStatus Status.
---@field title string One line for people.
---@field toolCallId string Id, unique in the session.
---@field toolName? string|nil The tool's name, for a call of a tool (not for Tandem's own cards).

--- Text or other content.
---@class tandem.ToolCallContent.content
---@field content tandem.ContentBlock The content.
---@field type "content"

--- A change to a file.
---@class tandem.ToolCallContent.diff
---@field hunks? tandem.HunkInfo[] Hunks with ids, for per-hunk acceptance (in permission requests).
---@field newText string Text after (empty for a deleted file).
---@field oldText? string|nil Text before; `null` for a new file.
---@field path string Absolute path.
---@field type "diff"

--- A terminal the client shows.
---@class tandem.ToolCallContent.terminal
---@field terminalId string Terminal id.
---@field type "terminal"

--- Content of a tool call.
---@alias tandem.ToolCallContent tandem.ToolCallContent.content|tandem.ToolCallContent.diff|tandem.ToolCallContent.terminal

--- A file location of a tool call.
---@class tandem.ToolCallLocation
---@field line? integer|nil 1-based line.
---@field path string Absolute path.

--- Where a tool call is in its life.
---@alias tandem.ToolCallStatus "pending"|"in_progress"|"completed"|"failed"

--- Changed fields of a tool call; absent fields are unchanged.
---@class tandem.ToolCallUpdate
---@field content? tandem.ToolCallContent[]|nil New content (replaces the old).
---@field kind? tandem.ToolKind|nil New kind.
---@field locations? tandem.ToolCallLocation[]|nil New locations.
---@field rawInput? any The arguments.
---@field rawOutput? any The tool's result (title, output, metadata, error).
---@field status? tandem.ToolCallStatus|nil New status.
---@field title? string|nil New title.
---@field toolCallId string Id of the call.

--- Tool groups: the unit that profiles and `TANDEM_FEATURE_<GROUP>` switch.
---@alias tandem.ToolGroup "fs"|"search"|"exec"|"web"|"interact"|"plan"|"memory"|"agent"|"lsp"|"mcp"

--- A tool as listed to the editor.
---@class tandem.ToolInfo
---@field aliases string[] Other names that resolve to it.
---@field canWrite boolean Whether it changes files or state.
---@field concurrencySafe boolean Whether it may run concurrently with other calls.
---@field description string What it does, for the model.
---@field group tandem.ToolGroup Its group.
---@field name string Canonical name.
---@field parameters any JSON Schema of its arguments.

--- What a tool call does, for icons and grouping.
---@alias tandem.ToolKind "read"|"edit"|"delete"|"move"|"search"|"execute"|"think"|"fetch"|"other"

--- The result of a tool call. A failed call sets `error`; it is not a JSON-RPC error.
---@class tandem.ToolResult
---@field attachments any[] Extra content (images, resources).
---@field error? string|nil When set, the call failed: what failed, why, and what to do next.
---@field metadata table<string, any> Structured details for editors and tests.
---@field output string The text the model sees.
---@field title string One line saying what happened.

--- Params of `tandem/tools/call`.
---@class tandem.ToolsCallParams
---@field arguments? any Arguments, as the tool's schema says.
---@field name string Tool name or alias.
---@field sessionId? string|nil The session on whose behalf it runs; staleness checks are per session.

--- Params of `tandem/tools/list`.
---@alias tandem.ToolsListParams table<string, any>

--- Result of `tandem/tools/list`.
---@class tandem.ToolsListResult
---@field profile string The active profile.
---@field tools tandem.ToolInfo[] The tools enabled in this workspace.

--- Token counts of a session.
---@class tandem.Usage
---@field cacheReadTokens integer Prompt tokens read from the provider's cache in the last model turn.
---@field contextWindow? integer The model's context window in tokens (0: unknown).
---@field inputTokens integer Prompt tokens of the last model turn (how full the context is).
---@field outputTokens integer Completion tokens of the last model turn.
---@field reasoningTokens? integer Completion tokens of the last model turn spent on reasoning.
---@field session? tandem.UsageTotals Totals over the whole session.
---@field totalTokens integer All tokens of the session so far (input + output over every model turn).

--- Token totals of a session (every model turn, compaction summaries included).
---@class tandem.UsageTotals
---@field cacheReadTokens integer Prompt tokens read from the provider's cache.
---@field costUsd? number|nil Estimated cost in US dollars of the turns whose model has a known price (list prices, or the configured ones); absent when no turn had one.
---@field inputTokens integer Prompt tokens (cached ones included).
---@field outputTokens integer Completion tokens.
---@field reasoningTokens integer Completion tokens spent on reasoning.

--- One agent worktree of the workspace's repository.
---@class tandem.WorktreeInfo
---@field branch string Its branch (`tandem/NAME`).
---@field changes integer How many files differ from its base (committed or not, new files included).
---@field lastSession? string|nil The newest of them.
---@field name string Its name (`tandem run --worktree NAME`).
---@field path string Its folder (absolute).
---@field sessions integer How many sessions worked in it.

--- A file of the worktree's change that was not brought over, and why.
---@class tandem.WorktreeLeftFile
---@field path string Workspace-relative path.
---@field reason string Why (a conflict with the person's own change since the base, not text, ...).

--- `tandem/worktree/list` params.
---@alias tandem.WorktreeListParams table<string, any>

--- `tandem/worktree/list` result.
---@class tandem.WorktreeListResult
---@field worktrees tandem.WorktreeInfo[] The agent worktrees, by name.

--- Where a session started with `worktree` works.
---@class tandem.WorktreePlace
---@field branch string Its branch (`tandem/NAME`).
---@field created boolean Whether this session created it (else it was reused).
---@field name string The worktree's name.
---@field path string Its folder (absolute): the session's workspace.

--- `tandem/worktree/review` params.
---@class tandem.WorktreeReviewParams
---@field name string The worktree's name.

--- `tandem/worktree/review` result, sent once the review is over and the accepted hunks are
--- written.
---@class tandem.WorktreeReviewResult
---@field applied string[] Files changed in the workspace (in whole or in part).
---@field base string The base commit the worktree's change was taken against (the merge base of the workspace's `HEAD` and the worktree's).
---@field left tandem.WorktreeLeftFile[] Files not brought over: refused before the review, or rejected in it.
---@field message string What happened, in words.

return {}
