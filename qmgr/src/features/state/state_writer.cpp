#include "state_writer.hpp"

#include <utility>

namespace cqmgr::qmgr {

StateWriter::StateWriter(std::shared_ptr<state::Store> store, int64_t horizon,
                         std::function<void()> on_rebuilt)
    : store_(std::move(store)), horizon_(horizon), on_rebuilt_(std::move(on_rebuilt)),
      rebuilds_seen_(store_->rebuilds()), thread_([this] { run(); }) {}

StateWriter::~StateWriter() {
    finish();
}

void StateWriter::submit(std::vector<state::DestinationRecord> records, int64_t now) {
    {
        std::lock_guard lock(mu_);
        now_ = now;
        for (auto& r : records) {
            std::string key = state::record_key(r.transport, r.destination);
            pending_.insert_or_assign(std::move(key), std::move(r));
        }
    }
    wake_.notify_one();
}

void StateWriter::drain() {
    std::unique_lock lock(mu_);
    idle_.wait(lock, [this] { return ((pending_.empty() || failures_ > 0) && !busy_) || exited_; });
}

void StateWriter::finish() {
    {
        std::lock_guard lock(mu_);
        if (stop_) return;
        stop_ = true;
    }
    wake_.notify_one();
    thread_.join();
}

std::vector<std::string> StateWriter::take_warnings() {
    std::lock_guard lock(mu_);
    return std::exchange(warnings_, {});
}

size_t StateWriter::commits() const {
    std::lock_guard lock(mu_);
    return commits_;
}

size_t StateWriter::written() const {
    std::lock_guard lock(mu_);
    return written_;
}

bool StateWriter::failing() const {
    std::lock_guard lock(mu_);
    return failures_ > 0 || !usable_;
}

void StateWriter::run() {
    std::unique_lock lock(mu_);
    for (;;) {
        // After a failure, a pause before the same records are tried again
        // (cut short by the end).
        if (failures_ > 0) wake_.wait_until(lock, retry_at_, [this] { return stop_; });
        wake_.wait(lock, [this] { return stop_ || !pending_.empty(); });
        if (pending_.empty()) break; // stopping, and nothing left
        state::Store::Batch batch;
        batch.puts.reserve(pending_.size());
        for (auto& [key, r] : pending_)
            batch.puts.push_back(std::move(r));
        pending_.clear();
        batch.now = now_;
        batch.oldest = now_ - horizon_;
        bool expire = next_expiry_ != 0 && now_ >= next_expiry_;
        if (next_expiry_ == 0 || expire) next_expiry_ = now_ + expiry_interval;
        busy_ = true;
        lock.unlock();
        if (expire) store_->expire(batch.oldest, batch.now);
        auto written = store_->apply(batch);
        std::vector<std::string> notes = store_->take_warnings();
        const uint64_t rebuilds = store_->rebuilds();
        const bool usable = store_->usable();
        lock.lock();
        usable_ = usable;
        for (std::string& n : notes)
            warnings_.push_back(std::move(n));
        if (written) {
            commits_++;
            written_ += batch.puts.size();
            if (failures_ > 0)
                warnings_.push_back("state: " + store_->path() + ": written again after " +
                                    std::to_string(failures_) + " failed commits");
            failures_ = 0;
        } else if (usable && !stop_) {
            // Kept for the next try; what was handed over since is newer.
            for (auto& r : batch.puts) {
                std::string key = state::record_key(r.transport, r.destination);
                pending_.try_emplace(std::move(key), std::move(r));
            }
            if (failures_++ == 0)
                warnings_.push_back("state: " + store_->path() + ": " + written.error().message() +
                                    "; changes wait in memory until writes succeed again");
            retry_at_ = std::chrono::steady_clock::now() + retry_delay;
        }
        // Not usable (the store said why), or stopping: dropped.
        if (rebuilds != rebuilds_seen_) {
            rebuilds_seen_ = rebuilds;
            if (on_rebuilt_) {
                lock.unlock();
                on_rebuilt_();
                lock.lock();
            }
        }
        busy_ = false; // only now: drain() returns after on_rebuilt_
        if (pending_.empty() || failures_ > 0) idle_.notify_all();
    }
    exited_ = true;
    idle_.notify_all();
}

} // namespace cqmgr::qmgr
