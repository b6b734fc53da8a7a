#include "update_plan.hpp"

#include "cqmgr/queuefile/envelope.hpp"
#include "cqmgr/queuefile/update.hpp"

#include <algorithm>
#include <ctime>
#include <fcntl.h>
#include <stdexcept>
#include <unistd.h>

namespace cqmgr::queuefile::golden {

UpdatePlan plan_updates(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw std::runtime_error("cannot open " + path);
    UpdatePlan plan;
    Envelope env;
    size_t index = 0;
    for (;;) {
        auto r = read_envelope(fd, env, 1000, path);
        if (!r.ok) {
            ::close(fd);
            throw std::runtime_error("read_envelope " + path + ": " + r.error);
        }
        for (auto& x : env.recipients)
            if (index++ % 3 == 0) plan.done_offsets.push_back(x.offset());
        if (env.rcpt_offset == 0) break;
    }
    ::close(fd);
    plan.warn_offset = env.warn_time > 0 ? env.warn_offset : 0;
    plan.trace_offset = env.tflags_offset;
    return plan;
}

void apply_updates(const std::string& path, const UpdatePlan& plan) {
    int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) throw std::runtime_error("cannot open " + path + " read-write");
    auto fail = [&](const FileError& e) {
        ::close(fd);
        throw std::runtime_error(e.message());
    };
    for (int64_t o : plan.done_offsets)
        if (auto e = mark_recipient_done(fd, o, path)) fail(*e);
    ::close(fd);
    // qmgr opens the file anew for each of these two.
    if (plan.warn_offset)
        if (auto e = rewrite_warn_time(path, plan.warn_offset, -1)) throw std::runtime_error(e->message());
    if (plan.trace_offset)
        if (auto e = kill_record(path, plan.trace_offset)) throw std::runtime_error(e->message());
}

std::vector<PostcatLine> expected_after(std::vector<PostcatLine> lines, const UpdatePlan& plan) {
    time_t minus_one = -1;
    struct tm tmv;
    char buf[64] = "";
    if (localtime_r(&minus_one, &tmv)) asctime_r(&tmv, buf);
    std::string never = buf;
    if (!never.empty() && never.back() == '\n') never.pop_back();
    for (auto& l : lines) {
        if (l.marker) continue;
        if (l.name == "recipient" &&
            std::find(plan.done_offsets.begin(), plan.done_offsets.end(), l.offset) !=
                plan.done_offsets.end())
            l.name = "done_recipient";
        else if (l.name == "warning_message_time" && l.offset == plan.warn_offset)
            l.value = never;
        else if (l.name == "named_attribute" && l.offset == plan.trace_offset) {
            l.name = "killed_record";
        }
    }
    return lines;
}

} // namespace cqmgr::queuefile::golden
