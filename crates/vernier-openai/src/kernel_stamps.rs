//! Kernel receive timestamps: on Linux, every TCP read is a `recvmsg` that asks the kernel when
//! the bytes it returns arrived (`SO_TIMESTAMPNS`, software receive stamps in
//! `CLOCK_REALTIME`). TLS reads the same socket, so it gets them too. Elsewhere, or when the
//! kernel gives none, the reader falls back to user-space instants.
//!
//! For TCP the kernel stamps a `recvmsg` with the arrival of the last segment it consumed, so
//! when a lagging client reads several events at once the earlier ones only get an upper
//! bound; [`RxLog`] numbers the reads so that such coalesced reads can be counted.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// The latest socket read of one connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RxRead {
    /// Reads so far on the connection, this one included.
    pub(crate) seq: u64,
    /// The kernel's receive time, nanoseconds since the Unix epoch (`CLOCK_REALTIME`).
    pub(crate) kernel_ns: Option<u64>,
}

/// What the socket reader of one connection saw last.
#[derive(Debug, Default)]
pub(crate) struct RxLog {
    latest: Mutex<Option<RxRead>>,
}

impl RxLog {
    pub(crate) fn record(&self, kernel_ns: Option<u64>) {
        if let Ok(mut latest) = self.latest.lock() {
            let seq = latest.map_or(1, |read| read.seq + 1);
            *latest = Some(RxRead { seq, kernel_ns });
        }
    }

    /// The latest read, if any.
    pub(crate) fn latest(&self) -> Option<RxRead> {
        self.latest.lock().ok().and_then(|latest| *latest)
    }
}

/// Nanoseconds since the Unix epoch now, on the clock the kernel stamps with.
pub(crate) fn realtime_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| {
            u64::try_from(since.as_nanos()).unwrap_or(u64::MAX)
        })
}

/// The longest gap between a kernel stamp and our read of it that is taken as lag; beyond it
/// (or below zero) the wall clock was stepped and the user-space instant is used.
const MAX_CREDIBLE_LAG: Duration = Duration::from_secs(30);

/// The instant bytes read at `read_at` (our clock) arrived by the kernel's stamp, converted
/// through the wall clock read now: `read_at − (now_realtime − kernel)`. Only the lag (µs to
/// ms) crosses from one clock to the other, so no long duration mixes two clocks. `None` when
/// the lag is negative or implausible (a clock step).
pub(crate) fn kernel_instant(read_at: Instant, now_ns: u64, kernel_ns: u64) -> Option<Instant> {
    let lag = Duration::from_nanos(now_ns.checked_sub(kernel_ns)?);
    if lag > MAX_CREDIBLE_LAG {
        return None;
    }
    read_at.checked_sub(lag)
}

/// The most one read takes. hyper asks for 8 KiB at first and for more when a read fills its
/// buffer; a streamed event is a few hundred bytes, and 16 KiB per connection stays small at
/// hundreds of streams.
#[cfg(target_os = "linux")]
const SCRATCH: usize = 16 * 1024;

/// A TCP stream whose reads carry kernel receive timestamps (Linux), logged in an [`RxLog`].
#[derive(Debug)]
pub(crate) struct StampedTcp {
    inner: TcpStream,
    log: Arc<RxLog>,
    /// The kernel accepted `SO_TIMESTAMPNS` on this socket.
    stamping: bool,
    #[cfg(target_os = "linux")]
    control: Vec<u8>,
    /// Where each `recvmsg` lands before it is copied into the caller's buffer.
    #[cfg(target_os = "linux")]
    scratch: Vec<u8>,
}

/// Linux turns receive stamping on for the whole machine when the first socket asks, a moment
/// later (deferred work), and off again when the last one closes. Every request has its own
/// connection, so without a socket that keeps asking, the first events of a request on a quiet
/// machine (its first token among them) could come unstamped. One UDP socket per process,
/// never read, keeps stamping on for as long as the client runs.
#[cfg(target_os = "linux")]
fn keep_stamping_on() -> bool {
    static KEEPER: std::sync::OnceLock<Option<std::net::UdpSocket>> = std::sync::OnceLock::new();
    KEEPER
        .get_or_init(|| {
            let socket = std::net::UdpSocket::bind(("127.0.0.1", 0)).ok()?;
            nix::sys::socket::setsockopt(
                &socket,
                nix::sys::socket::sockopt::ReceiveTimestampns,
                &true,
            )
            .ok()?;
            Some(socket)
        })
        .is_some()
}

/// Whether this machine's kernel stamps received data (Linux, `SO_TIMESTAMPNS`): streams read
/// through the client then carry the kernel's receive time on their events.
pub fn kernel_rx_available() -> bool {
    #[cfg(target_os = "linux")]
    {
        keep_stamping_on()
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

impl StampedTcp {
    /// Wraps `inner`, asking the kernel for receive timestamps; a kernel that refuses leaves
    /// the stream reading as usual.
    pub(crate) fn new(inner: TcpStream, log: Arc<RxLog>) -> Self {
        #[cfg(target_os = "linux")]
        {
            keep_stamping_on();
            let stamping = nix::sys::socket::setsockopt(
                &inner,
                nix::sys::socket::sockopt::ReceiveTimestampns,
                &true,
            )
            .is_ok();
            Self {
                inner,
                log,
                stamping,
                control: nix::cmsg_space!(nix::sys::time::TimeSpec),
                scratch: vec![0; SCRATCH],
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            Self {
                inner,
                log,
                stamping: false,
            }
        }
    }
}

#[cfg(target_os = "linux")]
fn receive(
    fd: std::os::fd::RawFd,
    buf: &mut [u8],
    control: &mut [u8],
) -> io::Result<(usize, Option<u64>)> {
    use nix::sys::socket::{ControlMessageOwned, MsgFlags, recvmsg};
    let mut iov = [io::IoSliceMut::new(buf)];
    let message =
        recvmsg::<()>(fd, &mut iov, Some(control), MsgFlags::empty()).map_err(io::Error::from)?;
    let mut stamp = None;
    if let Ok(messages) = message.cmsgs() {
        for control_message in messages {
            if let ControlMessageOwned::ScmTimestampns(at) = control_message {
                let seconds = u64::try_from(at.tv_sec()).unwrap_or(0);
                let nanos = u64::try_from(at.tv_nsec()).unwrap_or(0);
                stamp = Some(seconds.saturating_mul(1_000_000_000).saturating_add(nanos));
            }
        }
    }
    Ok((message.bytes, stamp))
}

impl AsyncRead for StampedTcp {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if !this.stamping {
            let before = buf.filled().len();
            let result = Pin::new(&mut this.inner).poll_read(cx, buf);
            if matches!(result, Poll::Ready(Ok(()))) && buf.filled().len() > before {
                this.log.record(None);
            }
            return result;
        }
        #[cfg(target_os = "linux")]
        loop {
            use std::os::fd::AsRawFd as _;
            match this.inner.poll_read_ready(cx) {
                Poll::Ready(Ok(())) => {}
                Poll::Ready(Err(error)) => return Poll::Ready(Err(error)),
                Poll::Pending => return Poll::Pending,
            }
            let fd = this.inner.as_raw_fd();
            let wanted = buf.remaining().min(this.scratch.len());
            let (scratch, control) = (&mut this.scratch[..wanted], &mut this.control);
            // A read shorter than asked for emptied the socket's queue: it is returned as
            // WouldBlock so that tokio clears the readiness (new bytes set it again), which
            // spares the `recvmsg` that would only have found the queue empty.
            let mut short = None;
            let result = this.inner.try_io(tokio::io::Interest::READABLE, || {
                let (n, stamp) = receive(fd, scratch, control)?;
                if n > 0 && n < wanted {
                    short = Some((n, stamp));
                    return Err(io::ErrorKind::WouldBlock.into());
                }
                Ok((n, stamp))
            });
            let (n, stamp) = match (result, short) {
                (_, Some(read)) | (Ok(read), None) => read,
                (Err(error), None) if error.kind() == io::ErrorKind::WouldBlock => continue,
                (Err(error), None) => return Poll::Ready(Err(error)),
            };
            // Bytes land in a buffer initialised once, not in hyper's spare capacity, which
            // would be zeroed on every read (several KiB for a few hundred bytes).
            buf.put_slice(&this.scratch[..n]);
            if n > 0 {
                this.log.record(stamp);
            }
            return Poll::Ready(Ok(()));
        }
        #[cfg(not(target_os = "linux"))]
        Pin::new(&mut this.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for StampedTcp {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn the_lag_alone_crosses_clocks_and_a_stepped_clock_is_refused() {
        let read_at = Instant::now();
        let at = kernel_instant(read_at, 5_000_000_123, 5_000_000_000).expect("123 ns of lag");
        assert_eq!(read_at.duration_since(at), Duration::from_nanos(123));
        // The kernel's stamp after our clock's now: the wall clock went back.
        assert_eq!(kernel_instant(read_at, 10, 20), None);
        // A minute of "lag": the wall clock jumped forward.
        assert_eq!(kernel_instant(read_at, 61_000_000_000, 1_000_000_000), None);
    }

    /// A connection to `listener` on loopback: the client's end and the server's.
    pub(crate) async fn connected(listener: &tokio::net::TcpListener) -> (TcpStream, TcpStream) {
        let address = listener.local_addr().expect("address");
        let client = TcpStream::connect(address).await.expect("connect");
        let (server, _) = listener.accept().await.expect("accept");
        (client, server)
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_loopback_read_carries_the_kernels_receive_time() {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let log = Arc::new(RxLog::default());
        let (client, mut server) = connected(&listener).await;
        let mut stamped = StampedTcp::new(client, Arc::clone(&log));
        assert!(stamped.stamping, "the kernel takes SO_TIMESTAMPNS");
        // The first socket on a quiet machine to ask turns the kernel's stamping on, which
        // takes effect a moment later: the first read may come without a stamp (and is then
        // timed in user space).
        server.write_all(b": warm\n\n").await.expect("write");
        let mut buf = [0u8; 64];
        let n = stamped.read(&mut buf).await.expect("read");
        assert_eq!(n, 8);
        tokio::time::sleep(Duration::from_millis(20)).await;
        let before = realtime_ns();
        server.write_all(b"data: one\n\n").await.expect("write");
        // Arrived, then read 20 ms later: the kernel's stamp is the arrival, not the read.
        tokio::time::sleep(Duration::from_millis(20)).await;
        let n = stamped.read(&mut buf).await.expect("read");
        let after = realtime_ns();
        assert_eq!(&buf[..n], b"data: one\n\n");
        let read = log.latest().expect("a read");
        assert_eq!(read.seq, 2);
        let kernel = read.kernel_ns.expect("a kernel stamp");
        assert!(
            before <= kernel && kernel <= after,
            "{before} {kernel} {after}"
        );
        assert!(
            after - kernel >= 15_000_000,
            "the stamp is the arrival, {} ms before the read",
            (after - kernel) / 1_000_000
        );
        server.write_all(b"data: two\n\n").await.expect("write");
        let n = stamped.read(&mut buf).await.expect("read");
        assert_eq!(n, 11);
        assert_eq!(log.latest().map(|r| r.seq), Some(3));
    }
}
