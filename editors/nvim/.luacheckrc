-- luacheck for the Neovim plugin and its tests (scripts/test and .ci/run run `luacheck .` here).
-- Neovim runs LuaJIT and gives the global `vim`; line length is left to review, as in the Rust
-- and TypeScript code.
std = "luajit"
globals = { "vim" }
max_line_length = false
