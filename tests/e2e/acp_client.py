"""An ACP client on the official Python SDK (`agent-client-protocol`, pinned in scripts/test) that
drives `tandem acp` through a scenario and prints what happened as one JSON object.

Usage: acp_client.py SCENARIO.json. The scenario:
  tandem, cwd, env        how to start the agent
  caps                    {"fs": bool, "terminal": bool, "elicitation": bool}
  buffers                 {abs path: text}: unsaved editor buffers served by fs/read_text_file
  permissions             answers in order: an optionId, {"optionId", "_meta"}, or "cancel"
                          ("cancel" sends session/cancel, then answers cancelled, as ACP says)
  answers                 elicitation answers in order: {"action", "content"}
  cancel_on_terminal      terminal ids ("term-2") whose creation is followed by session/cancel
  steps                   [{"op": "new", "mcpServers"?: [{"name", "command", "args"}]} | {"op": "prompt", "text", "images"?: [{"data", "mimeType"}]} | {"op": "set_mode", "mode"} |
                          {"op": "set_config", "id", "value"} | {"op": "list"} |
                          {"op": "load", "session"} | {"op": "resume", "session"} |
                          {"op": "raw", "method", "params"}]
Every message the agent sends is validated against the SDK's models; failures are reported in
`invalid`. The output: {"init", "results": [...], "events": [...], "invalid": [...]}.
"""

import asyncio
import json
import os
import pathlib
import signal
import sys
import time

START = time.monotonic()

import acp
from acp import schema
from acp.connection import StreamDirection


class Recorder:
    def __init__(self, scenario):
        self.scenario = scenario
        self.events = []
        self.invalid = []
        self.permissions = list(scenario.get("permissions", []))
        self.answers = list(scenario.get("answers", []))
        self.buffers = dict(scenario.get("buffers", {}))
        self.terminals = {}
        self.created = 0
        self.conn = None

    def on_connect(self, conn):
        self.conn = conn

    # Client methods called by the agent.
    def record(self, event):
        event["t"] = round(time.monotonic() - START, 2)
        self.events.append(event)

    async def session_update(self, session_id, update, **kwargs):
        self.record(
            {
                "kind": "update",
                "sessionId": session_id,
                "update": update.model_dump(by_alias=True, exclude_none=True),
            }
        )

    async def request_permission(self, session_id, tool_call, options, **kwargs):
        self.record(
            {
                "kind": "permission",
                "sessionId": session_id,
                "toolCall": tool_call.model_dump(by_alias=True, exclude_none=True),
                "options": [
                    o.model_dump(by_alias=True, exclude_none=True) for o in options
                ],
                "meta": kwargs or None,
            }
        )
        answer = self.permissions.pop(0) if self.permissions else "reject_once"
        if answer == "cancel":
            await self.conn.cancel(session_id=session_id)
            return schema.RequestPermissionResponse(
                outcome=schema.DeniedOutcome(outcome="cancelled")
            )
        if isinstance(answer, str):
            answer = {"optionId": answer}
        outcome = schema.AllowedOutcome(
            outcome="selected",
            option_id=answer["optionId"],
            field_meta=answer.get("_meta"),
        )
        return schema.RequestPermissionResponse(outcome=outcome)

    async def read_text_file(self, session_id, path, line=None, limit=None, **kwargs):
        self.record({"kind": "read", "path": path})
        if path in self.buffers:
            return schema.ReadTextFileResponse(content=self.buffers[path])
        text = await asyncio.to_thread(pathlib.Path(path).read_text, encoding="utf-8")
        return schema.ReadTextFileResponse(content=text)

    async def write_text_file(self, session_id, path, content, **kwargs):
        self.record({"kind": "write", "path": path, "content": content})
        self.buffers.pop(path, None)
        target = pathlib.Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        await asyncio.to_thread(target.write_text, content, encoding="utf-8")
        return schema.WriteTextFileResponse()

    async def create_terminal(
        self,
        session_id,
        command,
        args=None,
        env=None,
        cwd=None,
        output_byte_limit=None,
        **kwargs,
    ):
        self.record(
            {"kind": "terminal", "command": command, "args": args or [], "cwd": cwd}
        )
        process = await asyncio.create_subprocess_exec(
            command,
            *(args or []),
            cwd=cwd,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        self.created += 1
        terminal_id = f"term-{self.created}"
        output = bytearray()

        async def pump():
            while chunk := await process.stdout.read(4096):
                output.extend(chunk)
            await process.wait()

        self.terminals[terminal_id] = (process, output, asyncio.ensure_future(pump()))
        if terminal_id in self.scenario.get("cancel_on_terminal", []):

            async def cancel_soon():
                await asyncio.sleep(0.3)
                await self.conn.cancel(session_id=session_id)

            asyncio.ensure_future(cancel_soon())
        return schema.CreateTerminalResponse(terminal_id=terminal_id)

    async def wait_for_terminal_exit(self, session_id, terminal_id, **kwargs):
        process, _, pump = self.terminals[terminal_id]
        await pump
        return schema.WaitForTerminalExitResponse(exit_code=process.returncode)

    async def terminal_output(self, session_id, terminal_id, **kwargs):
        process, output, _ = self.terminals[terminal_id]
        status = (
            None
            if process.returncode is None
            else schema.TerminalExitStatus(exit_code=process.returncode)
        )
        return schema.TerminalOutputResponse(
            output=output.decode(errors="replace"), truncated=False, exit_status=status
        )

    async def kill_terminal(self, session_id, terminal_id, **kwargs):
        self.record({"kind": "terminal_kill", "terminalId": terminal_id})
        process, _, _ = self.terminals[terminal_id]
        if process.returncode is None:
            # The whole group, as a terminal's hang-up would: `sleep` started by bash too.
            os.killpg(process.pid, signal.SIGKILL)
        return schema.KillTerminalResponse()

    async def release_terminal(self, session_id, terminal_id, **kwargs):
        self.record({"kind": "terminal_release", "terminalId": terminal_id})
        self.terminals.pop(terminal_id, None)
        return schema.ReleaseTerminalResponse()

    async def create_elicitation(self, message, mode, **kwargs):
        self.record({"kind": "elicitation", "message": message, "mode": dump(mode)})
        answer = self.answers.pop(0) if self.answers else {"action": "cancel"}
        return answer

    async def ext_method(self, method, params):
        raise acp.RequestError.method_not_found(method)

    async def ext_notification(self, method, params):
        self.record({"kind": "ext_notification", "method": method})

    # Every message from the agent, checked against the SDK's models.
    def observe(self, event):
        if event.direction != StreamDirection.INCOMING:
            return
        message = event.message
        try:
            method = message.get("method")
            if method == "session/update":
                schema.SessionNotification.model_validate(message["params"])
            elif method == "session/request_permission":
                schema.RequestPermissionRequest.model_validate(message["params"])
        except Exception as err:  # noqa: BLE001 - reported to the test
            self.invalid.append({"message": message, "error": str(err)})


def dump(value):
    if value is None:
        return None
    if hasattr(value, "model_dump"):
        return value.model_dump(by_alias=True, exclude_none=True)
    return value


async def run(scenario):
    recorder = Recorder(scenario)
    caps = scenario.get("caps", {})
    client_caps = schema.ClientCapabilities(
        fs=schema.FileSystemCapabilities(
            read_text_file=caps.get("fs", False), write_text_file=caps.get("fs", False)
        ),
        terminal=caps.get("terminal", False),
        elicitation=schema.ElicitationCapabilities(
            form=schema.ElicitationFormCapabilities()
        )
        if caps.get("elicitation")
        else None,
    )
    env = dict(os.environ)
    env.update(scenario.get("env", {}))
    results = []
    async with acp.spawn_agent_process(
        lambda _agent: recorder,
        scenario["tandem"],
        "acp",
        env=env,
        cwd=scenario["cwd"],
        # tandem's log goes to our stderr (the test shows it on failure).
        transport_kwargs={"stderr": None},
        use_unstable_protocol=bool(caps.get("elicitation")),
    ) as (conn, process):
        conn._conn.add_observer(recorder.observe)
        init = await conn.initialize(
            protocol_version=acp.PROTOCOL_VERSION,
            client_capabilities=client_caps,
            client_info=schema.Implementation(name="tandem-e2e", version="1"),
        )
        session = None
        for step in scenario["steps"]:
            op = step["op"]
            try:
                if op == "new":
                    servers = [
                        schema.McpServerStdio(
                            name=m["name"],
                            command=m["command"],
                            args=m.get("args", []),
                            env=[],
                        )
                        for m in step.get("mcpServers", [])
                    ]
                    result = await conn.new_session(
                        cwd=scenario["cwd"], mcp_servers=servers
                    )
                    session = result.session_id
                elif op == "prompt":
                    images = [
                        schema.ImageContentBlock(
                            type="image", data=i["data"], mime_type=i["mimeType"]
                        )
                        for i in step.get("images", [])
                    ]
                    result = await conn.prompt(
                        session_id=session,
                        prompt=[
                            schema.TextContentBlock(type="text", text=step["text"]),
                            *images,
                        ],
                    )
                elif op == "set_mode":
                    result = await conn.set_session_mode(
                        session_id=session, mode_id=step["mode"]
                    )
                elif op == "set_config":
                    result = await conn.set_config_option(
                        session_id=session, config_id=step["id"], value=step["value"]
                    )
                elif op == "list":
                    result = await conn.list_sessions(cwd=scenario["cwd"])
                elif op == "load":
                    session = step["session"]
                    result = await conn.load_session(
                        session_id=session, cwd=scenario["cwd"], mcp_servers=[]
                    )
                elif op == "resume":
                    session = step["session"]
                    result = await conn.resume_session(
                        session_id=session, cwd=scenario["cwd"], mcp_servers=[]
                    )
                elif op == "raw":
                    result = await conn._conn.send_request(
                        step["method"], step["params"]
                    )
                else:
                    raise ValueError(f"unknown op {op}")
                results.append(
                    {
                        "op": op,
                        "ok": dump(result),
                        "t": round(time.monotonic() - START, 2),
                    }
                )
            except acp.RequestError as err:
                results.append(
                    {"op": op, "error": {"code": err.code, "message": str(err)}}
                )
            # Updates sent right after a response (available commands) arrive before the next step.
            await asyncio.sleep(0.05)
        # The agent exits when its input ends.
    results.append({"op": "exit", "t": round(time.monotonic() - START, 2)})
    return {
        "init": dump(init),
        "results": results,
        "events": recorder.events,
        "invalid": recorder.invalid,
        "exit": process.returncode,
    }


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        scenario = json.load(f)
    print(json.dumps(asyncio.run(run(scenario))))


if __name__ == "__main__":
    main()
