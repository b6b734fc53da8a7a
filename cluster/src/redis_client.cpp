// The asynchronous Redis client (see redis_client.hpp).
#include "cqmgr/cluster/redis_client.hpp"

#include "cqmgr/cluster/redis_replies.hpp"

#include <hiredis/async.h>
#include <hiredis/hiredis.h>

namespace cqmgr::cluster {

// hiredis's event hooks for one connection, on an Asio descriptor.  hiredis
// says when it wants to read or write (addRead, delWrite, ...); we wait for
// the socket to be ready and call its handler.  The descriptor only
// borrows the socket: hiredis closes it, after cleanup() has let it go.
// The attachment keeps itself alive until cleanup; pending waits hold it
// too, and find `ac` empty once the context is gone.
struct RedisClient::Attachment : std::enable_shared_from_this<Attachment> {
    asio::posix::stream_descriptor sd;
    redisAsyncContext* ac;
    bool want_read = false, want_write = false;
    bool read_armed = false, write_armed = false;
    std::shared_ptr<Attachment> keep;

    Attachment(asio::any_io_executor ex, redisAsyncContext* c) : sd(ex, c->c.fd), ac(c) {}

    // Hooks `c`'s events to a new attachment.
    static void attach(asio::any_io_executor ex, redisAsyncContext* c) {
        auto a = std::make_shared<Attachment>(ex, c);
        a->keep = a;
        c->ev.data = a.get();
        c->ev.addRead = [](void* p) { static_cast<Attachment*>(p)->want(false, true); };
        c->ev.delRead = [](void* p) { static_cast<Attachment*>(p)->want(false, false); };
        c->ev.addWrite = [](void* p) { static_cast<Attachment*>(p)->want(true, true); };
        c->ev.delWrite = [](void* p) { static_cast<Attachment*>(p)->want(true, false); };
        c->ev.cleanup = [](void* p) { static_cast<Attachment*>(p)->cleanup(); };
    }

    void want(bool write, bool on) {
        (write ? want_write : want_read) = on;
        if (on) arm(write);
    }

    // Waits for the socket to be ready for reading (or writing), once.
    void arm(bool write) {
        bool& armed = write ? write_armed : read_armed;
        if (armed || !(write ? want_write : want_read) || !ac) return;
        armed = true;
        auto kind = write ? asio::posix::descriptor_base::wait_write
                          : asio::posix::descriptor_base::wait_read;
        sd.async_wait(kind, [self = shared_from_this(), write](error_code ec) {
            (write ? self->write_armed : self->read_armed) = false;
            if (ec || !self->ac || !(write ? self->want_write : self->want_read)) return;
            if (write)
                redisAsyncHandleWrite(self->ac);
            else
                redisAsyncHandleRead(self->ac); // may free the context (cleanup)
            self->arm(write);
        });
    }

    // The context is being freed: stop waiting and give the socket back.
    void cleanup() {
        ac = nullptr;
        want_read = want_write = false;
        error_code ec;
        sd.cancel(ec);
        sd.release();
        keep.reset(); // the waits still pending hold their own reference
    }
};

namespace {

std::string millis(std::chrono::milliseconds d) {
    return std::to_string(d.count()) + " ms";
}

} // namespace

std::shared_ptr<RedisClient> RedisClient::create(asio::any_io_executor ex, RedisOptions options,
                                                 LogFn log, StateFn state) {
    return std::shared_ptr<RedisClient>(
        new RedisClient(ex, std::move(options), std::move(log), std::move(state)));
}

RedisClient::RedisClient(asio::any_io_executor ex, RedisOptions options, LogFn log, StateFn state)
    : ex_(ex), options_(std::move(options)), log_(std::move(log)), state_fn_(std::move(state)),
      deadline_(ex), retry_(ex), resolver_(ex), server_(options_.address) {}

RedisClient::~RedisClient() {
    close();
}

std::string RedisClient::where() const {
    if (options_.sentinels.empty()) return "redis server " + options_.address.text();
    std::string w = "redis master " + options_.master_name;
    if (!server_.host.empty()) w += " (" + server_.text() + ")";
    return w;
}

void RedisClient::start() {
    if (state_ != State::idle) return;
    connect();
}

void RedisClient::close() {
    if (state_ == State::closed) return;
    state_ = State::closed;
    retry_.cancel();
    resolver_.cancel();
    deadline_.cancel();
    if (redisAsyncContext* ac = ctx_) {
        fail_reason_ = "closed";
        ctx_ = nullptr;
        redisAsyncFree(ac);
    }
}

void RedisClient::connect() {
    if (state_ == State::closed) return;
    if (options_.sentinels.empty()) {
        open(options_.address);
        return;
    }
    asked_ = 0;
    ask_sentinel();
}

void RedisClient::ask_sentinel() {
    if (asked_ >= options_.sentinels.size()) {
        lost(sentinel_why_.empty() ? "no sentinel answered" : sentinel_why_);
        return;
    }
    asked_++;
    asking_ = true;
    open(options_.sentinels[sentinel_]);
}

void RedisClient::open(const RedisAddress& a) {
    target_ = a;
    error_code ec;
    if (a.is_unix() || (asio::ip::make_address(a.host, ec), !ec)) {
        connect_to(a.host, a.port);
        return;
    }
    // A host name: look it up on the resolver's thread, not in hiredis.
    state_ = State::resolving;
    resolver_.async_resolve(
        a.host, std::to_string(a.port),
        [weak = weak_from_this()](error_code ec, asio::ip::tcp::resolver::results_type results) {
            auto self = weak.lock();
            if (!self || self->state_ != State::resolving) return;
            if (ec || results.empty()) {
                self->failed("cannot resolve " + self->target_.host + ": " +
                             (ec ? ec.message() : std::string("no address")));
                return;
            }
            auto ep = results.begin()->endpoint();
            self->connect_to(ep.address().to_string(), ep.port());
        });
}

void RedisClient::connect_to(const std::string& host, int port) {
    redisAsyncContext* ac = target_.is_unix() ? redisAsyncConnectUnix(target_.path.c_str())
                                              : redisAsyncConnect(host.c_str(), port);
    if (!ac) {
        failed("cannot allocate a connection");
        return;
    }
    if (ac->err) {
        std::string why = ac->errstr;
        redisAsyncFree(ac);
        failed(why);
        return;
    }
    ac->data = this;
    guard_reader(ac->c.reader);
    Attachment::attach(ex_, ac);
    ctx_ = ac;
    state_ = State::connecting;
    redisAsyncSetDisconnectCallback(ac, &RedisClient::on_disconnect);
    // Set last: hiredis learns that the connection is made from the first
    // write readiness, which it asks the attachment for here.
    redisAsyncSetConnectCallback(ac, &RedisClient::on_connect);
    connect_deadline_ = Clock::now() + options_.connect_timeout;
    arm_deadline();
}

void RedisClient::on_connect(const redisAsyncContext* ac, int status) {
    auto* self = static_cast<RedisClient*>(ac->data);
    if (ac != self->ctx_) return;
    if (status != REDIS_OK) {
        // hiredis frees the context when we return.
        self->ctx_ = nullptr;
        self->failed(ac->errstr[0] ? ac->errstr : "connection refused");
        return;
    }
    auto* c = const_cast<redisAsyncContext*>(ac);
    if (self->asking_) {
        const std::string& name = self->options_.master_name;
        const char* argv[] = {"SENTINEL", "get-master-addr-by-name", name.c_str()};
        size_t lens[] = {8, 23, name.size()};
        redisAsyncCommandArgv(c, &RedisClient::on_sentinel, nullptr, 3, argv, lens);
        return;
    }
    // A socket is not yet a server that answers (a stopped one accepts
    // connections too), nor a master: up only after ROLE says "master" and
    // INFO gives the run_id, within the connect deadline.
    redisAsyncCommand(c, &RedisClient::on_role, nullptr, "ROLE");
}

void RedisClient::drop_later(redisAsyncContext* ac, const std::string& why) {
    // Not from inside hiredis: the context is freed.
    asio::post(ex_, [weak = weak_from_this(), ac, why] {
        if (auto s = weak.lock(); s && s->ctx_ == ac) s->drop(why);
    });
}

void RedisClient::on_sentinel(redisAsyncContext* ac, void* reply, void* privdata) {
    (void)privdata;
    auto* self = static_cast<RedisClient*>(ac->data);
    if (!reply || ac != self->ctx_ || !self->asking_ || self->state_ != State::connecting) return;
    RedisReply r = from_hiredis(static_cast<redisReply*>(reply));
    auto master = read_master_address(r);
    if (!master) {
        self->drop_later(ac, "no address for master " + self->options_.master_name + " (" +
                                 describe(r) + ")");
        return;
    }
    // Done with the sentinel: let it go, and connect to the master.
    asio::post(self->ex_, [weak = self->weak_from_this(), ac, m = *master] {
        auto s = weak.lock();
        if (!s || s->ctx_ != ac) return;
        s->fail_reason_ = "closed";
        s->ctx_ = nullptr;
        redisAsyncFree(ac);
        s->asking_ = false;
        if (s->log_ && !s->server_.host.empty() && !(s->server_ == m))
            s->log_(false, "redis master " + s->options_.master_name + ": now at " + m.text() +
                               " (was " + s->server_.text() + ")");
        s->server_ = m;
        s->open(m);
    });
}

void RedisClient::on_role(redisAsyncContext* ac, void* reply, void* privdata) {
    (void)privdata;
    auto* self = static_cast<RedisClient*>(ac->data);
    // No reply: the context is going away, and its disconnect says why.
    if (!reply || ac != self->ctx_ || self->state_ != State::connecting) return;
    RedisReply r = from_hiredis(static_cast<redisReply*>(reply));
    std::string role = read_role(r);
    if (role != "master") {
        // E.g. NOAUTH, or a replica (a failover under way).
        self->drop_later(ac, r.type == RedisReply::Type::error ? "ROLE: " + r.str
                             : role.empty()                    ? "ROLE: " + describe(r)
                                                               : "not a master (" + role + ")");
        return;
    }
    redisAsyncCommand(ac, &RedisClient::on_info, nullptr, "INFO server");
}

void RedisClient::on_info(redisAsyncContext* ac, void* reply, void* privdata) {
    (void)privdata;
    auto* self = static_cast<RedisClient*>(ac->data);
    if (!reply || ac != self->ctx_ || self->state_ != State::connecting) return;
    RedisReply r = from_hiredis(static_cast<redisReply*>(reply));
    auto run_id = read_run_id(r);
    if (!run_id) {
        self->drop_later(ac, "INFO server: no run_id");
        return;
    }
    self->instance_ = *run_id;
    self->came_up();
}

void RedisClient::came_up() {
    state_ = State::up;
    backoff_ = std::chrono::milliseconds(0);
    stats_.connects++;
    connection_++;
    if (log_) {
        if (in_outage_)
            log_(false, where() + ": connection restored; using shared limits");
        else if (!ever_up_)
            log_(false, where() + ": connected");
    }
    in_outage_ = false;
    ever_up_ = true;
    if (state_fn_)
        asio::post(ex_, [weak = weak_from_this()] {
            if (auto s = weak.lock(); s && s->up()) s->state_fn_(true);
        });
}

void RedisClient::on_disconnect(const redisAsyncContext* ac, int status) {
    (void)status;
    auto* self = static_cast<RedisClient*>(ac->data);
    if (ac != self->ctx_) return; // we dropped it ourselves
    self->ctx_ = nullptr;
    self->failed(ac->errstr[0] ? ac->errstr : "connection closed");
}

void RedisClient::on_reply(redisAsyncContext* ac, void* reply, void* privdata) {
    (void)privdata;
    auto* self = static_cast<RedisClient*>(ac->data);
    if (self->pending_.empty()) return;
    Pending p = std::move(self->pending_.front());
    self->pending_.pop_front();
    if (!reply) {
        self->stats_.failed++;
        std::string why = ac != self->ctx_ ? self->fail_reason_
                          : ac->errstr[0]  ? std::string(ac->errstr)
                                           : std::string("connection lost");
        self->deliver(std::move(p.done), RedisReply::failure(std::move(why)));
        return;
    }
    self->stats_.answered++;
    RedisReply r = from_hiredis(static_cast<redisReply*>(reply));
    // A write refused by a replica: the server was turned into one (a
    // failover); the next connection finds the new master.
    if (r.type == RedisReply::Type::error && r.str.starts_with("READONLY") && ac == self->ctx_)
        self->drop_later(ac, "no longer a master (" + r.str + ")");
    self->deliver(std::move(p.done), std::move(r));
    self->arm_deadline();
}

void RedisClient::command(std::vector<std::string> args, Callback done) {
    if (state_ != State::up) {
        stats_.failed++;
        deliver(std::move(done), RedisReply::failure("not connected"));
        return;
    }
    std::vector<const char*> argv;
    std::vector<size_t> lens;
    argv.reserve(args.size());
    lens.reserve(args.size());
    for (const std::string& a : args) {
        argv.push_back(a.data());
        lens.push_back(a.size());
    }
    if (redisAsyncCommandArgv(ctx_, &RedisClient::on_reply, nullptr, static_cast<int>(args.size()),
                              argv.data(), lens.data()) != REDIS_OK) {
        stats_.failed++;
        deliver(std::move(done), RedisReply::failure("cannot send the command"));
        return;
    }
    stats_.sent++;
    pending_.push_back({Clock::now() + options_.command_timeout, std::move(done)});
    arm_deadline();
}

void RedisClient::deliver(Callback done, RedisReply reply) {
    if (!done) return;
    asio::post(ex_, [done = std::move(done), reply = std::move(reply)] { done(reply); });
}

void RedisClient::failed(const std::string& why) {
    if (state_ == State::closed) return;
    if (!asking_) {
        lost(why);
        return;
    }
    // This sentinel did not say: the next one is asked (not from inside
    // hiredis), and asked first next time.
    sentinel_why_ = "sentinel " + options_.sentinels[sentinel_].text() + ": " + why;
    sentinel_ = (sentinel_ + 1) % options_.sentinels.size();
    asking_ = false;
    state_ = State::waiting;
    asio::post(ex_, [weak = weak_from_this()] {
        if (auto s = weak.lock(); s && s->state_ == State::waiting && !s->asking_)
            s->ask_sentinel();
    });
}

void RedisClient::lost(const std::string& why) {
    if (state_ == State::closed) return;
    bool was_up = state_ == State::up;
    state_ = State::waiting;
    asked_ = 0;
    if (!in_outage_) {
        in_outage_ = true;
        stats_.outages++;
        if (log_) log_(true, where() + ": " + why + "; using local limits");
    }
    if (was_up && state_fn_)
        asio::post(ex_, [weak = weak_from_this()] {
            if (auto s = weak.lock(); s && !s->up() && s->state_ != State::closed)
                s->state_fn_(false);
        });
    retry_later();
}

void RedisClient::drop(const std::string& why) {
    redisAsyncContext* ac = ctx_;
    if (!ac) return;
    fail_reason_ = why;
    ctx_ = nullptr;
    redisAsyncFree(ac); // fails every pending command with fail_reason_
    failed(why);
}

void RedisClient::retry_later() {
    backoff_ =
        backoff_.count() == 0 ? options_.backoff_min : std::min(backoff_ * 2, options_.backoff_max);
    retry_.expires_after(backoff_);
    retry_.async_wait([weak = weak_from_this()](error_code ec) {
        auto self = weak.lock();
        if (ec || !self || self->state_ != State::waiting) return;
        self->connect();
    });
}

// The timer is left running between commands and moved only when it would
// fire too late; when it fires early it looks again.  So a stream of
// commands costs no timer changes.
void RedisClient::arm_deadline() {
    Clock::time_point due;
    if (state_ == State::connecting)
        due = connect_deadline_;
    else if (state_ == State::up && !pending_.empty())
        due = pending_.front().deadline;
    else
        return;
    if (deadline_armed_ && deadline_due_ <= due) return;
    deadline_armed_ = true;
    deadline_due_ = due;
    deadline_.expires_at(due);
    deadline_.async_wait([weak = weak_from_this(), due](error_code ec) {
        auto self = weak.lock();
        if (ec || !self || self->deadline_due_ != due) return;
        self->deadline_armed_ = false;
        self->deadline_passed();
    });
}

void RedisClient::deadline_passed() {
    auto now = Clock::now();
    if (state_ == State::connecting && now >= connect_deadline_) {
        drop("no connection within " + millis(options_.connect_timeout));
        return;
    }
    if (state_ == State::up && !pending_.empty() && now >= pending_.front().deadline) {
        stats_.timeouts++;
        drop("no reply within " + millis(options_.command_timeout));
        return;
    }
    arm_deadline();
}

} // namespace cqmgr::cluster
