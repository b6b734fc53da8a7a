#include "cqmgr/protocol/delivery_client.hpp"

namespace cqmgr::protocol {

const char* kind_name(DeliveryOutcome::Kind k) {
    switch (k) {
    case DeliveryOutcome::Kind::replied: return "replied";
    case DeliveryOutcome::Kind::unavailable: return "unavailable";
    case DeliveryOutcome::Kind::crashed: return "crashed";
    }
    return "unknown";
}

AgentSession::AgentSession(asio::any_io_executor ex) : ex_(std::move(ex)) {}

AgentSession::~AgentSession() {
    close();
}

void AgentSession::close() {
    if (conv_) conv_->close();
    conv_.reset();
}

DeliveryOutcome AgentSession::failed(DeliveryOutcome::Kind kind, std::string warning) {
    DeliveryOutcome o;
    o.kind = kind;
    o.reply.hop.status = "4.3.0";
    o.reply.hop.reason = kind == DeliveryOutcome::Kind::unavailable ? "mail transport unavailable"
                                                                    : "unknown mail transport error";
    o.reply.status = -1;
    o.warning = std::move(warning);
    return o;
}

awaitable<bool> AgentSession::open(std::string path, DeliveryTimeouts timeouts) {
    close();
    path_ = std::move(path);
    auto slash = path_.rfind('/');
    transport_ = slash == std::string::npos ? path_ : path_.substr(slash + 1);
    timeouts_ = timeouts;
    conv_ = Conversation::create(ex_);
    if (!co_await conv_->connect(path_, timeouts_.connect)) {
        failure_ = failed(DeliveryOutcome::Kind::unavailable,
                          "connect to transport " + path_ + ": " + conv_->error());
        close();
        co_return false;
    }
    AttrList ann;
    if (!co_await conv_->read_list(ann, timeouts_.announce)) {
        if (conv_->clean_eof()) {
            // Stock qmgr: peekfd() sees no error and attr_scan() returns 0 at
            // EOF, which passes the check; the write finds the dead peer.
            co_return true;
        }
        failure_ = failed(DeliveryOutcome::Kind::unavailable,
                          path_ + " socket: " + conv_->error());
        close();
        co_return false;
    }
    if (!is_announcement(ann, delivery_protocol)) {
        failure_ = failed(DeliveryOutcome::Kind::unavailable, path_ + " socket: malformed response");
        failure_.detail = "expected protocol=" + std::string(delivery_protocol) + ", got " +
                          ann.describe_names();
        close();
        co_return false;
    }
    co_return true;
}

awaitable<DeliveryOutcome> AgentSession::deliver(DeliveryRequest request) {
    co_return co_await deliver_encoded(request.encode());
}

awaitable<DeliveryOutcome> AgentSession::deliver_encoded(std::string request) {
    if (!conv_) co_return failed(DeliveryOutcome::Kind::unavailable,
                                 "write to process (" + transport_ + "): session is not open");
    // A session whose announcement ended in EOF has a closed socket: the
    // request cannot go out.
    if (!conv_->is_open()) {
        close();
        co_return failed(DeliveryOutcome::Kind::unavailable,
                         "write to process (" + transport_ + "): Broken pipe");
    }
    DeliveryOutcome o;
    bool written = co_await conv_->write(std::move(request), timeouts_.write);
    if (!written)
        o = failed(DeliveryOutcome::Kind::unavailable,
                   "write to process (" + transport_ + "): " + conv_->error());
    else
        o = co_await read_reply();
    close();
    co_return o;
}

awaitable<DeliveryOutcome> AgentSession::read_reply() {
    AttrList list;
    bool got = co_await conv_->read_list(list, timeouts_.reply);
    if (!got) {
        // Stock qmgr says "malformed response" for anything but a socket
        // error at the first peek, EOF included; a timeout is fatal there,
        // a deferral here.
        std::string why = conv_->error() == "timeout" ? "timeout" : "malformed response";
        co_return failed(DeliveryOutcome::Kind::crashed, path_ + " socket: " + why);
    }
    co_return outcome_of(list);
}

DeliveryOutcome AgentSession::outcome_of(const AttrList& list) const {
    std::string err;
    auto r = decode_delivery_reply(list, &err);
    if (!r) {
        DeliveryOutcome o = failed(DeliveryOutcome::Kind::crashed, path_ + " socket: malformed response");
        o.detail = err;
        return o;
    }
    DeliveryOutcome o;
    o.kind = DeliveryOutcome::Kind::replied;
    o.reply = std::move(*r);
    return o;
}

awaitable<DeliveryOutcome> deliver_once(std::string path, DeliveryRequest request,
                                        DeliveryTimeouts timeouts) {
    AgentSession s(co_await asio::this_coro::executor);
    if (!co_await s.open(std::move(path), timeouts)) co_return s.failure();
    co_return co_await s.deliver(std::move(request));
}

} // namespace cqmgr::protocol
