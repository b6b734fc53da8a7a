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

awaitable<bool> RewriteClient::exchange(const std::string& request, AttrList& reply,
                                        std::string& error) {
    auto now = Clock::now();
    if (conv_ &&
        (now - used_ > timeouts_.idle || now - born_ > timeouts_.ttl || conv_->readable_now()))
        close();
    if (!conv_) {
        conv_ = Conversation::create(ex_);
        ++connects_;
        if (!co_await conv_->connect(path_, timeouts_.io)) {
            error = "connect to " + path_ + ": " + conv_->error();
            close();
            co_return false;
        }
        AttrList ann;
        if (!co_await conv_->read_list(ann, timeouts_.io)) {
            error = "read " + path_ + ": " + conv_->error();
            close();
            co_return false;
        }
        if (!is_announcement(ann, rewrite_protocol)) {
            error = "read " + path_ + ": expected protocol=" + std::string(rewrite_protocol) +
                    ", got " + ann.describe_names();
            close();
            co_return false;
        }
        born_ = Clock::now();
    }
    if (!co_await conv_->write(request, timeouts_.io)) {
        error = "write " + path_ + ": " + conv_->error();
        close();
        co_return false;
    }
    if (!co_await conv_->read_list(reply, timeouts_.io)) {
        error = "read " + path_ + ": " + conv_->error();
        close();
        co_return false;
    }
    used_ = Clock::now();
    co_return true;
}

awaitable<ResolveResult> RewriteClient::resolve(std::string request_class, std::string sender,
                                                std::string address) {
    co_await take_turn();
    ResolveResult r;
    AttrList reply;
    if (co_await exchange(encode_resolve_request(request_class, sender, address), reply, r.error)) {
        std::string err;
        auto decoded = decode_resolve_reply(reply, &err);
        if (!decoded) {
            r.error = "malformed reply from " + path_ + ": " + err;
        } else if (decoded->transport.empty()) {
            r.error = "expected a transport in the reply from " + path_ + " for <" + address +
                      ">, got an empty one";
        } else if (decoded->recipient.empty() && !address.empty()) {
            r.error = "expected a recipient in the reply from " + path_ + " for <" + address +
                      ">, got an empty one";
        } else {
            r.ok = true;
            r.reply = std::move(*decoded);
        }
        if (!r.ok || r.reply.server_flags != 0) close();
    }
    release_turn();
    co_return r;
}

awaitable<RewriteResult> RewriteClient::rewrite(std::string rule, std::string address) {
    co_await take_turn();
    RewriteResult r;
    AttrList reply;
    if (co_await exchange(encode_rewrite_request(rule, address), reply, r.error)) {
        std::string err;
        auto decoded = decode_rewrite_reply(reply, &err);
        if (!decoded) {
            r.error = "malformed reply from " + path_ + ": " + err;
        } else {
            r.ok = true;
            r.address = std::move(decoded->address);
        }
        if (!r.ok || decoded->server_flags != 0) close();
    }
    release_turn();
    co_return r;
}

} // namespace cqmgr::protocol
