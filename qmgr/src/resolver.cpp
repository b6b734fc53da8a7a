#include "resolver.hpp"

#include "log.hpp"

namespace cqmgr::qmgr {

namespace {
// Postfix's clnt_stream defaults: drop an idle connection after ipc_idle,
// any connection after ipc_ttl.
constexpr auto ipc_idle = std::chrono::seconds(5);
constexpr auto ipc_ttl = std::chrono::seconds(1000);
// Answers are reused for this long, as Postfix's resolve cache does.
constexpr auto cache_ttl = std::chrono::seconds(30);
constexpr size_t cache_max = 10000;
} // namespace

Resolver::Resolver(asio::any_io_executor ex, std::string service, std::chrono::seconds ipc_timeout)
    : ex_(std::move(ex)), path_("private/" + service), ipc_timeout_(ipc_timeout) {}

void Resolver::release_turn() {
    busy_ = false;
    if (!waiters_.empty()) {
        auto* w = waiters_.front();
        waiters_.pop_front();
        w->cancel();
    }
}

awaitable<protocol::ResolveReply> Resolver::resolve(std::string request_class, std::string sender,
                                                    std::string address) {
    std::string key = request_class + '\0' + sender + '\0' + address;
    auto now = Clock::now();
    if (!address.empty()) {
        if (auto it = cache_.find(key); it != cache_.end() && now - it->second.when < cache_ttl)
            co_return it->second.reply;
    }
    protocol::ResolveReply reply;
    auto list = co_await exchange(
        protocol::encode_resolve_request(request_class, sender, address),
        [&](const protocol::AttrList& l) -> std::string {
            std::string err;
            auto r = protocol::decode_resolve_reply(l, &err);
            if (!r) return "malformed reply: " + err;
            // An empty answer is trivial-rewrite having trouble: ask again.
            if (r->transport.empty()) return "empty transport in reply";
            if (r->recipient.empty() && !address.empty()) return "empty recipient in reply";
            reply = std::move(*r);
            return {};
        });
    (void)list;
    if (!address.empty()) {
        if (cache_.size() >= cache_max) cache_.clear();
        cache_[key] = Cached{reply, Clock::now()};
    }
    co_return reply;
}

awaitable<std::string> Resolver::rewrite(std::string rule, std::string address) {
    protocol::AttrWriter w;
    w.str("request", "rewrite").str("rule", rule).str("address", address).end();
    std::string result;
    co_await exchange(w.take(), [&](const protocol::AttrList& l) -> std::string {
        if (!l.names_are({"flags", "address"}))
            return "malformed reply: expected flags, address; got " + l.describe_names();
        result = l.attrs[1].value;
        return {};
    });
    co_return result;
}

awaitable<protocol::AttrList> Resolver::exchange(
    std::string request, std::function<std::string(const protocol::AttrList&)> accept) {
    // One request at a time on the shared connection; others wait their turn.
    while (busy_) {
        asio::steady_timer turn(ex_, Clock::time_point::max());
        waiters_.push_back(&turn);
        error_code ec;
        co_await turn.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
    busy_ = true;
    protocol::AttrList reply;
    for (;;) {
        if (co_await try_exchange(request, reply, accept)) break;
        asio::steady_timer pause(ex_, std::chrono::seconds(1));
        error_code ec;
        co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
    release_turn();
    co_return reply;
}

awaitable<bool> Resolver::try_exchange(
    const std::string& request, protocol::AttrList& reply,
    const std::function<std::string(const protocol::AttrList&)>& accept) {
    auto now = Clock::now();
    if (conv_ && (now - conn_used_ > ipc_idle || now - conn_born_ > ipc_ttl || conv_->readable_now())) {
        conv_->close();
        conv_.reset();
    }
    auto fail = [&](const std::string& why) {
        log::warn("problem talking to service " + path_.substr(8) + ": " + why);
        if (conv_) conv_->close();
        conv_.reset();
        return false;
    };
    if (!conv_) {
        conv_ = protocol::Conversation::create(ex_);
        if (!co_await conv_->connect(path_, ipc_timeout_))
            co_return fail("connect to " + path_ + ": " + conv_->error());
        protocol::AttrList ann;
        if (!co_await conv_->read_list(ann, ipc_timeout_)) co_return fail(conv_->error());
        if (!protocol::is_announcement(ann, protocol::rewrite_protocol))
            co_return fail("unexpected announcement: " + ann.describe_names());
        conn_born_ = Clock::now();
    }
    if (!co_await conv_->write(request, ipc_timeout_)) co_return fail(conv_->error());
    if (!co_await conv_->read_list(reply, ipc_timeout_)) co_return fail(conv_->error());
    if (std::string err = accept(reply); !err.empty()) co_return fail(err);
    conn_used_ = Clock::now();
    // The first attribute is the server's "disconnect after this" flag.
    if (!reply.attrs.empty() && reply.attrs[0].name == "flags" && reply.attrs[0].value != "0") {
        conv_->close();
        conv_.reset();
    }
    co_return true;
}

} // namespace cqmgr::qmgr
