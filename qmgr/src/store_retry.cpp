#include "store_retry.hpp"

#include "log.hpp"

#include <algorithm>

namespace cqmgr::qmgr {

namespace {
constexpr int first_delay = 1; // seconds
constexpr int max_delay = 60;
} // namespace

struct StoreRetry::Attempt {
    std::string kind;
    Op op;
    Done done;
    asio::steady_timer timer;
    int delay = first_delay;
};

StoreRetry::StoreRetry(asio::io_context& io, const WallClock& clock, WarningLimiter& limiter)
    : io_(io), clock_(clock), limiter_(limiter) {}

void StoreRetry::run(std::string_view kind, Op op) {
    run(kind, std::move(op), [](const queuefile::StoreResult& r) {
        if (r) log::warn(r->text);
    });
}

void StoreRetry::run(std::string_view kind, Op op, Done done) {
    queuefile::StoreResult r = op();
    if (!r || r->gone()) {
        done(r);
        return;
    }
    report(kind, *r);
    auto a = std::make_shared<Attempt>(Attempt{std::string(kind), std::move(op), std::move(done),
                                               asio::steady_timer(io_), first_delay});
    ++pending_;
    schedule(std::move(a));
}

void StoreRetry::schedule(std::shared_ptr<Attempt> a) {
    a->timer.expires_after(std::chrono::seconds(a->delay));
    a->timer.async_wait([this, a](const error_code& ec) {
        if (ec) return;
        queuefile::StoreResult r = a->op();
        if (r && !r->gone()) {
            report(a->kind, *r);
            a->delay = std::min(a->delay * 2, max_delay);
            schedule(a);
            return;
        }
        --pending_;
        a->done(r);
    });
}

void StoreRetry::report(std::string_view kind, const queuefile::StoreError& e) {
    if (auto text = limiter_.filter(std::string(kind) + "/" + std::to_string(e.sys_errno), e.text,
                                    clock_.now()))
        log::warn(*text);
}

} // namespace cqmgr::qmgr
