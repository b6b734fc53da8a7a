// Interim entry scheduler and delivery-agent client.
//
// Structure follows stock qmgr: a transport (master.cf service) holds
// destination queues; a queue holds entries (up to the recipient limit of one
// message's recipients for that destination).  A queue has a concurrency
// window that grows on success and shrinks on failure (Postfix 2.5 feedback,
// constant variant), and a queue that fails a whole pseudo-cohort is declared
// dead: its pending entries are handed to the `retry` transport with the
// reason, and it is left alone for minimal_backoff_time.
//
// Selection here is simple FIFO per queue and round-robin over queues and
// transports.  Rak's preemptive job scheduler and recipient pools replace it
// in the scheduler core (issue #6); the interface to the queue manager stays.
#pragma once

#include "cqmgr/conf/main_cf.hpp"
#include "cqmgr/protocol/conversation.hpp"
#include "cqmgr/protocol/messages.hpp"
#include "message.hpp"
#include "settings.hpp"

#include <deque>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace cqmgr::qmgr {

struct Queue;
struct Transport;

// One delivery request's worth of recipients of one message for one queue.
struct Entry {
    Message* message = nullptr;
    Queue* queue = nullptr;
    std::vector<queuefile::Recipient> recipients;
};

// A hop status (RFC 3463 code and text) with which qmgr defers.
struct Dsn {
    std::string status;
    std::string reason;
};

struct Queue {
    Transport* transport = nullptr;
    std::string name;    // lowercased nexthop, or localpart@nexthop
    std::string nexthop; // as the resolver gave it
    std::deque<std::unique_ptr<Entry>> todo;
    int busy = 0;
    int window = 0;
    double success = 0, failure = 0, fail_cohorts = 0;
    bool dead = false;
    Dsn dead_dsn;
    bool in_rotation = false;
};

struct Transport {
    std::string name;
    TransportSettings settings;
    std::map<std::string, std::unique_ptr<Queue>> queues;
    std::list<Queue*> rotation; // queues with todo entries, served round-robin
    int pending = 0;            // connections not yet announced by an agent
    bool dead = false;
    Dsn dead_dsn;
};

class Dispatcher {
  public:
    // Called when an entry is finished, whatever the outcome.
    using EntryDone = std::function<void(Message&)>;

    Dispatcher(asio::io_context& io, const conf::MainCf& cf, const Settings& settings,
               EntryDone on_entry_done);

    // Finds or creates a transport by master.cf service name.
    Transport& transport(const std::string& name);
    // Finds or creates a destination queue.
    Queue& queue(Transport& t, const std::string& name, const std::string& nexthop);
    // Adds recipients of `m` for `q`, filling the message's last entry there
    // up to the recipient limit before starting a new one.
    void add_recipient(Message& m, Queue& q, const queuefile::Recipient& r);
    // Finishes a message's batch of additions: makes new work visible.
    void pump();

    // Queue for a recipient bound to a dead transport or queue: the retry
    // transport, its queue named by the DSN.
    Queue& retry_queue(const Dsn& dsn);
    // Revives every dead transport and queue now (the F trigger).
    void flush_dead();

  private:
    awaitable<void> run_connection(Transport* t);
    awaitable<void> deliver(std::shared_ptr<protocol::Conversation> conv, std::unique_ptr<Entry> e);
    // Picks the next entry of `t` that may be sent now.
    std::unique_ptr<Entry> select_entry(Transport& t);
    // Entries of `t` that could be sent now (bounded by `cap`).
    int selectable(Transport& t, int cap);
    void enqueue(Queue& q, std::unique_ptr<Entry> e);
    void transport_dead(Transport& t, const Dsn& dsn);
    void queue_success(Queue& q);
    void queue_failure(Queue& q, const Dsn& dsn);
    void defer_todo(Queue& q, const Dsn& dsn);
    void entry_finished(Entry& e);

    asio::io_context& io_;
    const conf::MainCf& cf_;
    const Settings& settings_;
    EntryDone on_entry_done_;
    std::map<std::string, std::unique_ptr<Transport>> transports_;
    std::list<Transport*> transport_rr_;
    // Last entry per (message, queue) that still has room.
    std::map<std::pair<Message*, Queue*>, Entry*> open_entries_;
    bool pump_posted_ = false;
};

} // namespace cqmgr::qmgr
