// libFuzzer target for the conversation state machines: the delivery call
// (AgentCall, driven by completion handlers, and AgentSession, the same call
// behind coroutines), the one-shot service exchange (run_command over a
// Conversation) and trivial-rewrite's long-lived client (RewriteClient).
// The fuzzer plays the peer on a real UNIX-domain socket and the loop's
// turns: the input is a script of what the peer sends, in which pieces,
// when the loop runs, when a deadline passes, when the peer closes, and
// when the owner sends its request or abandons the call.
//
// Input: byte 0 picks the machine (b % 4) and options; byte 1 the
// timeouts of the Conversation machines (a bit per step: zero, or an hour)
// and the request's size; then one op per byte, with data where an op
// writes (see run_script()).  A deadline of the delivery call passes when
// the script says so (the call is taken off its deadline list and told, as
// the one timer would do it), so a run never waits on the clock.
//
// Besides the sanitizers it checks:
//   * a call is heard of at most once per step, never after its owner
//     abandoned it, and a reply only follows a request;
//   * every machine ends once the peer has closed: no wait outlives it;
//   * the client side is closed when a machine has ended (the agent sees
//     EOF), and nothing is left pending (leaks);
//   * an outcome is self-consistent (a failure carries stock's hop status
//     and a warning; a completed command has a status and no error);
//   * the delivery call's reply does not depend on how the reply's bytes
//     were cut: the same script with the reply's bytes sent in one piece
//     gives the same outcome.
#include "cqmgr/protocol/agent_call.hpp"
#include "cqmgr/protocol/command_client.hpp"
#include "cqmgr/protocol/messages.hpp"
#include "cqmgr/protocol/rewrite_client.hpp"
#include "cqmgr/test/delivery_client.hpp"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <vector>

using namespace cqmgr;
using namespace cqmgr::protocol;

namespace {

// With CQMGR_FUZZ_VERBOSE set (running one input by hand): what a run
// ended with.
void say(const std::string& what) {
    static const bool verbose = std::getenv("CQMGR_FUZZ_VERBOSE") != nullptr;
    if (verbose) std::fprintf(stderr, "%s\n", what.c_str());
}

// Aborts with a message: a finding.
[[noreturn]] void finding(const char* what) {
    std::fprintf(stderr, "fuzz invariant violated: %s\n", what);
    std::abort();
}

// The peer's socket, in a scratch directory made once.
std::string socket_name;
constexpr auto forever = std::chrono::hours(1);
// Loop turns that a machine may take to end after the peer closed.
constexpr int max_final_polls = 200;

// The peer's listening socket, made once (libFuzzer's own paths may be
// relative: the working directory stays).
int listener() {
    static int fd = [] {
        char dir[] = "/tmp/cqmgr-fuzz-conv-XXXXXX";
        if (!::mkdtemp(dir)) finding("scratch directory");
        socket_name = std::string(dir) + "/agent";
        static std::string scratch = dir;
        std::atexit([] {
            ::unlink(socket_name.c_str());
            ::rmdir(scratch.c_str());
        });
        int l = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        sockaddr_un sa{};
        sa.sun_family = AF_UNIX;
        std::strcpy(sa.sun_path, socket_name.c_str());
        if (::bind(l, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || ::listen(l, 16) != 0)
            finding("listen");
        return l;
    }();
    return fd;
}

// One turn of the loop: runs what is ready now.  (A loop that ran out of
// work stops, and runs nothing more until it is restarted.)
void turn(asio::io_context& io) {
    io.restart();
    io.poll();
}

// The peer's end of one connection.
struct Peer {
    int fd = -1;
    bool write_closed = false;
    bool saw_eof = false; // the client closed its end
    size_t received = 0;  // request bytes read so far

    ~Peer() {
        if (fd >= 0) ::close(fd);
    }
    // Takes the client's connection if one is waiting.  A newer one
    // replaces the one before (the rewrite client drops a connection and
    // makes another, and the peer serves it as trivial-rewrite would); a
    // peer that has closed closes it at once.
    void accept_pending() {
        int next = ::accept4(listener(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (next < 0) return;
        if (fd >= 0) ::close(fd);
        fd = next;
        saw_eof = false;
        if (write_closed) ::shutdown(fd, SHUT_WR);
    }
    // Sends `bytes`; returns those that went out (a full socket, or a
    // client that is gone, loses the rest).
    std::string_view write(std::string_view bytes) {
        accept_pending();
        if (fd < 0 || write_closed) return {};
        size_t done = 0;
        while (done < bytes.size()) {
            ssize_t n =
                ::send(fd, bytes.data() + done, bytes.size() - done, MSG_DONTWAIT | MSG_NOSIGNAL);
            if (n <= 0) break;
            done += static_cast<size_t>(n);
        }
        return bytes.substr(0, done);
    }
    // Reads what the client sent (at most `limit` bytes); notes an EOF.
    void drain(size_t limit = SIZE_MAX) {
        accept_pending();
        if (fd < 0) return;
        char buf[65536];
        while (limit > 0) {
            ssize_t n = ::recv(fd, buf, std::min(limit, sizeof buf), MSG_DONTWAIT);
            if (n == 0) saw_eof = true;
            if (n <= 0) return;
            received += static_cast<size_t>(n);
            limit -= static_cast<size_t>(n);
        }
    }
    void close_write() {
        accept_pending();
        if (fd >= 0) ::shutdown(fd, SHUT_WR);
        write_closed = true;
    }
};

// Reads the script one byte at a time.
struct Input {
    const uint8_t* p;
    size_t left;
    bool empty() const { return left == 0; }
    uint8_t byte() {
        if (left == 0) return 0;
        --left;
        return *p++;
    }
    std::string_view bytes(size_t n) {
        n = std::min(n, left);
        std::string_view s(reinterpret_cast<const char*>(p), n);
        p += n;
        left -= n;
        return s;
    }
};

// ---- the delivery call -------------------------------------------------

// What the owner of a call heard, and what it does.
class Call : public AgentCall {
  public:
    explicit Call(asio::any_io_executor ex) : AgentCall(std::move(ex)) {}

    std::string request;
    bool send_at_once = true; // send from on_announced(), as the daemon does
    bool sent = false, abandoned = false;
    std::optional<bool> announced;
    std::optional<DeliveryOutcome> outcome;

    bool ended() const { return abandoned || announced == false || outcome.has_value(); }
    bool may_send() const { return announced == true && !sent && !abandoned; }
    void send_request() {
        sent = true;
        send(request);
    }
    void abandon() {
        abandoned = true;
        close();
    }

  private:
    void on_announced(bool ok) override {
        if (abandoned) finding("on_announced after close()");
        if (announced) finding("on_announced twice");
        announced = ok;
        if (!ok) check_failure(failure(), DeliveryOutcome::Kind::unavailable);
        if (ok && send_at_once) send_request();
    }
    void on_replied(DeliveryOutcome&& o) override {
        if (abandoned) finding("on_replied after close()");
        if (!sent) finding("on_replied without a request");
        if (outcome) finding("on_replied twice");
        if (o.kind != DeliveryOutcome::Kind::replied) check_failure(o, o.kind);
        outcome = std::move(o);
    }
    static void check_failure(const DeliveryOutcome& o, DeliveryOutcome::Kind kind) {
        if (o.kind != kind) finding("failure of the wrong kind");
        if (o.reply.hop.status != "4.3.0" || o.reply.status != -1)
            finding("failure without stock's hop status");
        if (o.warning.empty()) finding("failure without a warning");
    }
};

// What a run of the delivery call ended with.
struct CallRun {
    bool eligible = false; // the reply's bytes alone followed the request
    std::optional<DeliveryOutcome> outcome;
    std::string reply_bytes; // what the peer sent after the request went out
};

bool same(const DeliveryOutcome& a, const DeliveryOutcome& b) {
    const HopStatus &x = a.reply.hop, &y = b.reply.hop;
    return a.kind == b.kind && a.reply.status == b.reply.status && a.warning == b.warning &&
           a.detail == b.detail && x.status == y.status && x.diag_type == y.diag_type &&
           x.diag_text == y.diag_text && x.mta_type == y.mta_type && x.mta_mname == y.mta_mname &&
           x.action == y.action && x.reason == y.reason;
}

// Runs the delivery call under the script `in`.  With `replay` (the first
// run's result), the script is followed only up to the request, and every
// byte the first run sent after it goes out in one piece.
CallRun run_call(Input in, size_t request_size, bool send_at_once, const CallRun* replay) {
    CallRun r;
    asio::io_context io;
    boost::intrusive_ptr<Call> call(new Call(io.get_executor()));
    call->request.assign(request_size, 'r');
    call->send_at_once = send_at_once;
    Peer peer;
    DeliveryTimeouts t{forever, forever, forever, forever, forever};
    bool disturbed = false; // a deadline or the owner intervened after the request
    if (call->start(socket_name, t)) {
        while (!in.empty() && !call->ended()) {
            if (replay && call->sent) break;
            uint8_t op = in.byte();
            switch (op % 8) {
            case 0:
            case 1:
            case 2: { // the peer sends up to 63 bytes
                std::string_view sent = peer.write(in.bytes(op / 8 % 64));
                if (call->sent) r.reply_bytes.append(sent);
                break;
            }
            case 3: // a turn of the loop
                turn(io);
                break;
            case 4: // the peer reads some of the request
                peer.drain(size_t{1} << (op / 8 % 20));
                break;
            case 5: // the deadline of the current step passes
                if (call->is_linked()) {
                    AgentDeadlines::of(io.get_executor()).disarm(*call);
                    static_cast<AgentDeadline&>(*call).deadline_passed();
                    disturbed |= call->sent;
                }
                break;
            case 6: // the owner sends its request late (after a rate delay)
                if (call->may_send()) call->send_request();
                break;
            case 7: // the owner abandons the call, or the peer stops sending
                if (op / 8 % 4 == 0) {
                    call->abandon();
                    disturbed |= call->sent;
                } else {
                    peer.close_write();
                }
                break;
            }
        }
        if (replay && call->sent) {
            // The same bytes as the first run, after the request, at once.
            r.reply_bytes = peer.write(replay->reply_bytes);
        }
        if (call->may_send()) call->send_request();
        // The end: the peer closes; reading the request as it comes.
        peer.close_write();
        for (int i = 0; i < max_final_polls && !call->ended(); ++i) {
            turn(io);
            peer.drain();
            if (call->may_send()) call->send_request();
        }
        if (!call->ended()) finding("the delivery call did not end after the peer closed");
    } else {
        call->abandoned = true; // nothing follows a failed start
        if (call->failure().warning.empty()) finding("a failed start without a warning");
    }
    // Ended: the client's end is closed, and nothing is left waiting.
    turn(io);
    peer.accept_pending();
    for (int i = 0; i < max_final_polls && peer.fd >= 0 && !peer.saw_eof; ++i) {
        peer.drain();
        turn(io);
    }
    if (peer.fd >= 0 && !peer.saw_eof) finding("the client's end stayed open after the end");
    r.eligible = call->sent && !disturbed && call->outcome.has_value();
    r.outcome = call->outcome;
    call.reset();
    io.restart();
    io.run(); // whatever is still queued must finish without waiting
    return r;
}

void fuzz_call(Input in, uint8_t options, uint8_t sizes) {
    // Mostly small requests; a large one does not fit the socket buffer, so
    // its write waits for the peer to read.
    size_t request_size = (sizes & 0x30) == 0x30 ? 300000 : 1 + sizes % 200;
    bool send_at_once = !(options & 0x04);
    CallRun first = run_call(in, request_size, send_at_once, nullptr);
    if (first.outcome)
        say(std::string("call: ") + kind_name(first.outcome->kind) + " status " +
            std::to_string(first.outcome->reply.status) + " " + first.outcome->reply.hop.status +
            " warning '" + first.outcome->warning + "' detail '" + first.outcome->detail + "'" +
            (first.eligible ? " (replayed)" : ""));
    else
        say("call: no reply");
    if (!first.eligible) return;
    CallRun again = run_call(in, request_size, send_at_once, &first);
    if (!again.outcome) finding("the replay did not reply");
    if (!same(*first.outcome, *again.outcome))
        finding("the reply depends on how its bytes were cut");
}

// ---- the peer's script for the coroutine machines ----------------------

// The timeout of one step: zero (passes at the first turn that waits) or
// an hour (never, here).
std::chrono::steady_clock::duration step_timeout(uint8_t bits, int step) {
    return (bits >> step & 1) ? std::chrono::steady_clock::duration::zero()
                              : std::chrono::steady_clock::duration(forever);
}

// Runs the peer's script against a coroutine that sets `done` when it
// ends; then the peer closes, and the coroutine must end.
void drive(asio::io_context& io, Peer& peer, Input& in, const bool& done, const char* what) {
    while (!in.empty() && !done) {
        uint8_t op = in.byte();
        switch (op % 4) {
        case 0:
        case 1:
            peer.write(in.bytes(op / 4 % 64));
            break;
        case 2:
            turn(io);
            peer.drain();
            break;
        case 3:
            peer.close_write();
            break;
        }
    }
    peer.close_write();
    for (int i = 0; i < max_final_polls && !done; ++i) {
        turn(io);
        peer.drain();
    }
    if (!done) finding(what);
}

// ---- AgentSession ------------------------------------------------------

void fuzz_session(Input in, uint8_t sizes) {
    asio::io_context io;
    Peer peer;
    bool done = false;
    std::optional<DeliveryOutcome> out;
    bool open_failed = false;
    auto session = std::make_shared<AgentSession>(io.get_executor());
    size_t request_size = 1 + sizes % 200;
    asio::co_spawn(
        io,
        [&]() -> awaitable<void> {
            DeliveryTimeouts t{forever, forever, forever, forever, forever};
            if (!co_await session->open(socket_name, t)) {
                open_failed = true;
                if (session->failure().warning.empty()) finding("open failed without a warning");
            } else {
                out = co_await session->deliver_encoded(std::string(request_size, 'r'));
            }
            done = true;
        },
        asio::detached);
    drive(io, peer, in, done, "the session did not end after the peer closed");
    if (out)
        say(std::string("session: ") + kind_name(out->kind) + " status " +
            std::to_string(out->reply.status) + " warning '" + out->warning + "'");
    if (out && out->kind != DeliveryOutcome::Kind::replied &&
        (out->warning.empty() || out->reply.hop.status != "4.3.0"))
        finding("a session's failure without stock's words");
    (void)open_failed;
    session.reset();
    io.restart();
    io.run();
}

// ---- run_command and RewriteClient (Conversation) ---------------------------

void fuzz_command(Input in, uint8_t options, uint8_t timeouts) {
    asio::io_context io;
    Peer peer;
    bool done = false;
    CommandResult result;
    CommandTimeouts t{step_timeout(timeouts, 0), step_timeout(timeouts, 1),
                      step_timeout(timeouts, 2), step_timeout(timeouts, 3)};
    ReplyShape shape = (options & 0x04) ? ReplyShape::status_first : ReplyShape::status_only;
    asio::co_spawn(
        io,
        [&]() -> awaitable<void> {
            result = co_await run_command(socket_name, status_protocol, "request", t, shape);
            done = true;
        },
        asio::detached);
    drive(io, peer, in, done, "run_command did not end after the peer closed");
    say("command: status " + std::to_string(result.status) + " error '" + result.error + "'");
    if (result.completed != result.error.empty())
        finding("a command's error and completion disagree");
    if (!result.completed && result.status != -1) finding("an incomplete command with a status");
    io.restart();
    io.run();
    peer.drain();
    if (peer.fd >= 0 && !peer.saw_eof) finding("run_command left its connection open");
}

void fuzz_rewrite(Input in, uint8_t options, uint8_t timeouts) {
    asio::io_context io;
    Peer peer;
    bool done = false;
    RewriteTimeouts t;
    t.io = step_timeout(timeouts, 0);
    auto client = std::make_shared<RewriteClient>(io.get_executor(), socket_name, t);
    int requests = 1 + options / 8 % 3;
    asio::co_spawn(
        io,
        [&]() -> awaitable<void> {
            // Requests one after another on the shared connection, each
            // ending in a result: a new connection follows a failure.
            for (int i = 0; i < requests; ++i) {
                ResolveResult r = co_await client->resolve("resolve", "", "u@example.com");
                say("resolve: " + (r ? r->transport + " " + r->nexthop : r.error().message()));
                if (!r && r.error().message().empty()) finding("a resolve's error says nothing");
                if (r && r->transport.empty()) finding("a resolve without a transport");
                if (!r) break; // a later connect waits for an accept that never comes
            }
            done = true;
        },
        asio::detached);
    drive(io, peer, in, done, "the rewrite client did not end after the peer closed");
    client->close();
    io.restart();
    io.run();
    peer.drain();
    if (peer.fd >= 0 && !peer.saw_eof) finding("the rewrite client left its connection open");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 2) return 0;
    listener();
    Input in{data + 2, size - 2};
    uint8_t options = data[0], second = data[1];
    switch (options % 4) {
    case 0:
        fuzz_call(in, options, second);
        break;
    case 1:
        fuzz_session(in, second);
        break;
    case 2:
        fuzz_command(in, options, second);
        break;
    case 3:
        fuzz_rewrite(in, options, second);
        break;
    }
    // A connection the client made and the script never took: dropped.
    for (;;) {
        int fd = ::accept4(listener(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) break;
        ::close(fd);
    }
    return 0;
}
