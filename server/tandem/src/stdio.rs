//! stdin/stdout for the LSP transport. When they are pipes or Unix sockets (how editors start
//! us: libuv, which VS Code and Neovim use, gives socket pairs; others give pipes) they are
//! registered with tokio's reactor, so a message costs no hand-off to a blocking thread as
//! `tokio::io::stdin/stdout` do (measured: about half the server CPU per round trip). Anything
//! else, a terminal or a file, falls back to tokio's own.

use std::fs::File;
use std::io;
use std::os::fd::AsFd;
use std::os::unix::fs::FileTypeExt;
use std::pin::Pin;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::unix::pipe;

enum Kind {
    Pipe(std::os::fd::OwnedFd),
    Socket(std::os::fd::OwnedFd),
}

fn classify(fd: impl AsFd) -> io::Result<Kind> {
    let owned = fd.as_fd().try_clone_to_owned()?;
    let file = File::from(owned);
    let kind = file.metadata()?.file_type();
    let owned = std::os::fd::OwnedFd::from(file);
    if kind.is_fifo() {
        Ok(Kind::Pipe(owned))
    } else if kind.is_socket() {
        Ok(Kind::Socket(owned))
    } else {
        Err(io::Error::other("neither a pipe nor a socket"))
    }
}

fn socket(owned: std::os::fd::OwnedFd) -> io::Result<tokio::net::UnixStream> {
    let stream = std::os::unix::net::UnixStream::from(owned);
    stream.set_nonblocking(true)?;
    tokio::net::UnixStream::from_std(stream)
}

/// Standard input for the transport. Must be called inside the runtime.
pub fn stdin() -> Pin<Box<dyn AsyncRead + Send>> {
    let reactor = classify(io::stdin()).and_then(|kind| -> io::Result<Pin<Box<dyn AsyncRead + Send>>> {
        Ok(match kind {
            Kind::Pipe(fd) => Box::pin(pipe::Receiver::from_owned_fd(fd)?),
            Kind::Socket(fd) => Box::pin(socket(fd)?),
        })
    });
    reactor.unwrap_or_else(|err| {
        tracing::debug!("stdin through tokio's blocking reader ({err})");
        Box::pin(tokio::io::stdin())
    })
}

/// Standard output for the transport. Must be called inside the runtime.
pub fn stdout() -> Pin<Box<dyn AsyncWrite + Send>> {
    let reactor = classify(io::stdout()).and_then(|kind| -> io::Result<Pin<Box<dyn AsyncWrite + Send>>> {
        Ok(match kind {
            Kind::Pipe(fd) => Box::pin(pipe::Sender::from_owned_fd(fd)?),
            Kind::Socket(fd) => Box::pin(socket(fd)?),
        })
    });
    reactor.unwrap_or_else(|err| {
        tracing::debug!("stdout through tokio's blocking writer ({err})");
        Box::pin(tokio::io::stdout())
    })
}
