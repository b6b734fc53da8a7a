#include "entry_records.hpp"

#include <algorithm>

namespace cqmgr::qmgr {

std::vector<DeferRecord> entry_records(const core::Entry& e, const std::string& path,
                                       int64_t mark) {
    // One delivery adds a record of a few hundred bytes per recipient.
    constexpr size_t max_read = 256 * 1024;
    std::vector<DeferRecord> records = parse_defer_records(read_from(path, mark, max_read));
    std::erase_if(records, [&](const DeferRecord& rec) {
        return std::none_of(e.rcpts.begin(), e.rcpts.end(),
                            [&](const auto& r) { return r.offset() == rec.offset; });
    });
    return records;
}

} // namespace cqmgr::qmgr
