// The reply rules' actions shared across a cluster (see shared_actions.hpp).
#include "shared_actions.hpp"

#include <algorithm>

namespace cqmgr::qmgr {

SharedActions::SharedActions(asio::io_context& io, ReplyActions& actions,
                             cluster::SharedState& shared, const WallClock& clock, std::string host,
                             std::chrono::milliseconds poll)
    : actions_(actions), shared_(shared), clock_(clock), host_(std::move(host)), poll_(poll),
      timer_(io) {}

SharedActions::~SharedActions() {
    *alive_ = false;
    actions_.share({});
}

void SharedActions::start() {
    ReplyActions::Share share;
    share.started = [this](const SharedAction& a) {
        known_.insert_or_assign(a.id(), expiry_ms(a));
        put(a, false);
    };
    share.ended = [this](const SharedAction& a) {
        ended_.insert_or_assign(a.id(), std::pair{a, expiry_ms(a)});
        put(a, true);
    };
    actions_.share(std::move(share));
    tick();
}

int64_t SharedActions::expiry_ms(const SharedAction& a) const {
    // The same on every host, so that their records agree.
    return a.until > 0 ? a.until * 1000 : a.since * 1000 + count_only_ms;
}

void SharedActions::put(const SharedAction& a, bool ended) {
    // Away: put on the board at the next connection (tick()).
    if (!shared_.up()) return;
    SharedAction mine = a;
    if (mine.host.empty()) mine.host = host_;
    cluster::BoardRecord r;
    r.field = mine.key();
    r.id = mine.id();
    r.since_ms = mine.since * 1000;
    r.ended = ended;
    r.expires_ms = expiry_ms(mine);
    r.value = encode_shared_action(mine);
    shared_.board_put(board, r);
}

void SharedActions::tick() {
    prune(clock_.now_ms());
    if (shared_.up() && shared_.connection() != synced_) {
        // A new connection (perhaps to a server that lost the board):
        // everything in force here and every early end goes on it again.
        synced_ = shared_.connection();
        for (const SharedAction& a : actions_.shared()) {
            known_.insert_or_assign(a.id(), expiry_ms(a));
            put(a, false);
        }
        for (const auto& [id, e] : ended_)
            put(e.first, true);
        version_.clear();
    }
    if (shared_.up() && !reading_) {
        reading_ = true;
        shared_.board_read(board, version_, [this, alive = alive_](const cluster::BoardAnswer& a) {
            if (!*alive) return;
            reading_ = false;
            read(a);
        });
    }
    arm();
}

void SharedActions::read(const cluster::BoardAnswer& answer) {
    if (answer.failed || !answer.changed) return;
    version_ = answer.version;
    const int64_t now_ms = clock_.now_ms();
    for (const cluster::BoardRecord& r : answer.records) {
        auto a = decode_shared_action(r.value);
        if (!a || a->id() != r.id || r.expires_ms <= now_ms) continue;
        if (r.ended) {
            if (ended_.try_emplace(r.id, *a, r.expires_ms).second) actions_.end_shared(*a);
            continue;
        }
        // Applied once: an action known here (taken here, applied, or seen
        // before) or ended is not applied again.
        if (ended_.count(r.id) || !known_.try_emplace(r.id, r.expires_ms).second) continue;
        actions_.adopt(*a);
    }
}

void SharedActions::prune(int64_t now_ms) {
    std::erase_if(known_, [now_ms](const auto& kv) { return kv.second <= now_ms; });
    std::erase_if(ended_, [now_ms](const auto& kv) { return kv.second.second <= now_ms; });
}

void SharedActions::arm() {
    timer_.expires_after(poll_);
    timer_.async_wait([this, alive = alive_](error_code ec) {
        if (!ec && *alive) tick();
    });
}

} // namespace cqmgr::qmgr
