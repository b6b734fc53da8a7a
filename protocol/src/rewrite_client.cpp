#include "cqmgr/protocol/rewrite_client.hpp"

namespace cqmgr::protocol {

RewriteClient::RewriteClient(asio::any_io_executor ex, std::string path, RewriteTimeouts timeouts)
    : ex_(std::move(ex)), path_(std::move(path)), timeouts_(timeouts) {}

RewriteClient::~RewriteClient() {
    close();
    for (auto& w : waiters_)
        w->cancel();
}

void RewriteClient::close() {
    if (conv_) conv_->close();
    conv_.reset();
}

awaitable<void> RewriteClient::take_turn() {
    while (busy_) {
        auto turn = std::make_shared<asio::steady_timer>(ex_, Clock::time_point::max());
        waiters_.push_back(turn);
        error_code ec;
        co_await turn->async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
    busy_ = true;
}

void RewriteClient::release_turn() {
    busy_ = false;
    if (!waiters_.empty()) {
        auto next = waiters_.front();
        waiters_.pop_front();
        next->cancel();
    }
}

std::string RewriteError::message() const {
    switch (kind) {
    case Kind::connect:
        return "connect to " + path + ": " + detail;
    case Kind::read:
        return "read " + path + ": " + detail;
    case Kind::announcement:
        return "read " + path + ": expected protocol=" + std::string(rewrite_protocol) + ", got " +
               detail;
    case Kind::write:
        return "write " + path + ": " + detail;
    case Kind::malformed:
        return "malformed reply from " + path + ": " + detail;
    case Kind::no_transport:
        return "expected a transport in the reply from " + path + " for <" + detail +
               ">, got an empty one";
    case Kind::no_recipient:
        return "expected a recipient in the reply from " + path + " for <" + detail +
               ">, got an empty one";
    }
    return detail;
}

Failure<RewriteError> RewriteClient::failure(RewriteError::Kind kind, std::string detail) const {
    return Failure{RewriteError{kind, path_, std::move(detail)}};
}

awaitable<Result<void, RewriteError>> RewriteClient::exchange(const std::string& request,
                                                              AttrList& reply) {
    using Kind = RewriteError::Kind;
    // Drops the connection: the next request makes a new one.
    auto fail = [this](Kind kind, std::string detail) {
        Result<void, RewriteError> f = failure(kind, std::move(detail));
        close();
        return f;
    };
    auto now = Clock::now();
    if (conv_ &&
        (now - used_ > timeouts_.idle || now - born_ > timeouts_.ttl || conv_->readable_now()))
        close();
    if (!conv_) {
        conv_ = Conversation::create(ex_);
        ++connects_;
        if (!co_await conv_->connect(path_, timeouts_.io))
            co_return fail(Kind::connect, conv_->error());
        AttrList ann;
        if (!co_await conv_->read_list(ann, timeouts_.io))
            co_return fail(Kind::read, conv_->error());
        if (!is_announcement(ann, rewrite_protocol))
            co_return fail(Kind::announcement, ann.describe_names());
        born_ = Clock::now();
    }
    if (!co_await conv_->write(request, timeouts_.io)) co_return fail(Kind::write, conv_->error());
    if (!co_await conv_->read_list(reply, timeouts_.io)) co_return fail(Kind::read, conv_->error());
    used_ = Clock::now();
    co_return Result<void, RewriteError>{};
}

ResolveResult RewriteClient::resolve_answer(const AttrList& reply,
                                            const std::string& address) const {
    using Kind = RewriteError::Kind;
    auto decoded = decode_resolve_reply(reply);
    if (!decoded) return failure(Kind::malformed, decoded.error().message());
    if (decoded->transport.empty()) return failure(Kind::no_transport, address);
    if (decoded->recipient.empty() && !address.empty()) return failure(Kind::no_recipient, address);
    return std::move(*decoded);
}

awaitable<ResolveResult> RewriteClient::resolve(std::string request_class, std::string sender,
                                                std::string address) {
    co_await take_turn();
    AttrList reply;
    auto sent = co_await exchange(encode_resolve_request(request_class, sender, address), reply);
    ResolveResult r = sent ? resolve_answer(reply, address) : ResolveResult(Failure{sent.error()});
    // A failed exchange has closed the connection already.
    if (!r || r->server_flags != 0) close();
    release_turn();
    co_return r;
}

awaitable<RewriteResult> RewriteClient::rewrite(std::string rule, std::string address) {
    co_await take_turn();
    AttrList reply;
    auto sent = co_await exchange(encode_rewrite_request(rule, address), reply);
    if (!sent) {
        release_turn();
        co_return RewriteResult(Failure{sent.error()});
    }
    auto decoded = decode_rewrite_reply(reply);
    if (!decoded || decoded->server_flags != 0) close();
    release_turn();
    if (!decoded)
        co_return RewriteResult(failure(RewriteError::Kind::malformed, decoded.error().message()));
    co_return RewriteResult(std::move(decoded->address));
}

} // namespace cqmgr::protocol
