// One delivery conversation with an agent (private/smtp, private/local, ...)
// driven by completion handlers: connect, read the announcement, send one
// request, read the reply, close.  Its owner derives from it and hears of
// each step through on_announced() and on_replied(), always from the loop.
//
// Why not coroutines: the queue manager makes one such conversation per
// delivery, and as nested coroutines it cost a dozen frame allocations and
// as many trips through the executor per delivery, more than the protocol
// work itself.  Here a call is one object; each wait is one reactor
// operation on its socket; deadlines are kept for all calls together
// (agent_deadlines.hpp).  What the conversation decides, and every word it
// says, are stock qmgr's (docs/compatibility.md, "Malformed agent
// replies"): the tests' AgentSession (cqmgr/test/delivery_client.hpp) is
// the same call behind an awaitable interface.
#pragma once

#include "cqmgr/protocol/agent_deadlines.hpp"
#include "cqmgr/protocol/asio.hpp"
#include "cqmgr/protocol/attr_scan.hpp"
#include "cqmgr/protocol/delivery_outcome.hpp"

#include <array>
#include <boost/smart_ptr/intrusive_ptr.hpp>
#include <boost/smart_ptr/intrusive_ref_counter.hpp>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>

namespace cqmgr::protocol {

class AgentCall : public boost::intrusive_ref_counter<AgentCall, boost::thread_unsafe_counter>,
                  public AgentDeadline {
  public:
    using Ptr = boost::intrusive_ptr<AgentCall>;

    explicit AgentCall(asio::any_io_executor ex);
    AgentCall(const AgentCall&) = delete;
    AgentCall& operator=(const AgentCall&) = delete;
    virtual ~AgentCall();

    // Connects to `path` now, without waiting.  False when that failed at
    // once (no such socket, nobody listening: failure() says so); then
    // nothing follows.  Otherwise on_announced() follows.  Hold the call in
    // a Ptr: its handlers hold it too, for as long as they wait.
    bool start(std::string path, const DeliveryTimeouts& timeouts);
    // Sends the encoded request (DeliveryRequest::encode or the queue
    // manager's encoder) after on_announced(true); on_replied() follows.
    // The bytes are copied only when the socket cannot take them at once,
    // so the caller may reuse its buffer as soon as this returns.
    void send(std::string_view request);
    // Abandons the call: the agent sees EOF, nothing more is heard of it.
    void close();

    // After on_announced(false), or a start() that failed: the outcome for
    // the entry, as stock's (mail transport unavailable).
    const DeliveryOutcome& failure() const;
    // What stock's attribute scanner logged about the announcement, also
    // when it was accepted (an attribute missing or one too many); empty
    // when the announcement was as expected.
    const std::string& announcement_warning() const { return announcement_warning_; }
    const std::string& path() const { return path_; }

  protected:
    // The connection and the announcement are done: ok, send() may follow;
    // or not (failure() says why; the call is closed).  As in stock, an
    // agent that closed before its first byte is not yet a failure: the
    // request's write finds it.
    virtual void on_announced(bool ok) = 0;
    // The request's outcome: the agent's reply, or stock's verdict on what
    // went wrong (the call is closed).
    virtual void on_replied(DeliveryOutcome&& outcome) = 0;

  private:
    enum class Step { idle, connecting, announcing, sending, replying, done };

    void deadline_passed() override;
    // Puts the current wait under `timeout`.
    void arm(DeliveryTimeouts::Duration timeout);
    // Connected: the announcement's scan begins.
    void connected();
    // Reads what there is for the scan (the first read at most `limit`
    // bytes); waits when nothing is there yet.
    void read_step(size_t limit = 4096);
    // Reads when the agent has sent something (or a timeout comes), into
    // first_bytes_, and goes on with what that read.
    void wait_readable();
    // The read of wait_readable() ended with `ec` after `n` bytes.
    void read_done(const error_code& ec, size_t n);
    // Feeds `in` to the scan; keeps what it did not take in pending_.
    void take(std::string_view in);
    // The scan of the announcement or the reply is done (or the input
    // ended: `ended`, and `timed_out` when a deadline ended it).
    void scanned(bool ended, bool timed_out);
    void announce_done(bool ended, bool timed_out);
    void reply_done(bool ended, bool timed_out);
    // The request could not go out: the outcome `warning` follows from
    // the loop.
    void send_failed(std::string warning);
    // The request went out: the reply's scan begins.
    void sent();
    // Ends the call with `o` (the socket is closed first).
    void reply(DeliveryOutcome&& o);
    // The transport's name for "write to process (NAME)".
    std::string transport() const;
    // Sets failure() to `o`, with the announcement's warning as its detail.
    void fail(DeliveryOutcome&& o);
    // Sets failure() for a connection that could not be made, and closes.
    void connect_failed(const std::string& error);
    // An outcome of `kind` with stock's hop status and `warning`.
    static DeliveryOutcome failed(DeliveryOutcome::Kind kind, std::string warning);
    // Turns the reply's finished scan into the outcome.
    DeliveryOutcome outcome_of_scan();

    // Opens the socket already non-blocking, so that Asio does not set the
    // mode with an ioctl of its own: one system call less per delivery.
    class Socket : public asio::local::stream_protocol::socket {
      public:
        using asio::local::stream_protocol::socket::basic_stream_socket;
        void open_non_blocking(error_code& ec);
    };

    // Room for the read that wait_readable() leaves with Asio (its operation
    // and handler), so that a wait costs no allocation.  A call has one
    // such read pending at a time; should another come, or a larger one,
    // it gets the heap.
    struct OpRoom {
        alignas(std::max_align_t) unsigned char bytes[256];
        bool busy = false;
    };
    template <class T> struct OpAllocator {
        using value_type = T;
        OpRoom* room;
        explicit OpAllocator(OpRoom* r) noexcept : room(r) {}
        template <class U> OpAllocator(const OpAllocator<U>& o) noexcept : room(o.room) {}
        T* allocate(size_t n) {
            if (!room->busy && n * sizeof(T) <= sizeof room->bytes) {
                room->busy = true;
                return reinterpret_cast<T*>(room->bytes);
            }
            return static_cast<T*>(::operator new(n * sizeof(T)));
        }
        void deallocate(T* p, size_t) noexcept {
            if (reinterpret_cast<unsigned char*>(p) == room->bytes)
                room->busy = false;
            else
                ::operator delete(p);
        }
        template <class U> bool operator==(const OpAllocator<U>& o) const noexcept {
            return room == o.room;
        }
    };
    // The handler of that read: holds the call, and takes the room.
    struct ReadHandler {
        Ptr self;
        using allocator_type = OpAllocator<void>;
        allocator_type get_allocator() const noexcept { return allocator_type(&self->op_room_); }
        void operator()(const error_code& ec, size_t n) const { self->read_done(ec, n); }
    };

    asio::any_io_executor ex_;
    Socket socket_;
    OpRoom op_room_;
    std::string path_;
    DeliveryTimeouts timeouts_;
    Step step_ = Step::idle;
    bool timed_out_ = false; // the wait in progress ran out of time
    std::string error_;      // why the socket ended (read, write, connect)
    std::string pending_;    // bytes read and not yet scanned
    // Where a read waited for lands: replies and announcements are short;
    // a longer one goes on in read_step().
    std::array<char, 128> first_bytes_;
    std::optional<AttrScan> scan_;
    std::string request_; // while it is being written
    // Only a failure has one (a call is allocated per delivery, and below
    // about 1 kB it stays on the allocator's fast path).
    std::unique_ptr<DeliveryOutcome> failure_;
    std::string announcement_warning_;
};

} // namespace cqmgr::protocol
