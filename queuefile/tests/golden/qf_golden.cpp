// qf_golden — the live golden test's checker.
//
//   qf_golden compare QF POSTCAT_V POSTCAT_E [BATCH]
//       compares what queuefile reads from QF with postcat's two outputs.
//   qf_golden update QF
//       applies the test's in-place updates to QF (see update_plan.hpp).
//   qf_golden check-update ORIG_POSTCAT_V PLAN_QF UPDATED_QF UPDATED_POSTCAT_V UPDATED_POSTCAT_E
//       checks that postcat shows exactly the planned changes (the plan is
//       recomputed from PLAN_QF, an untouched copy of the original) and that
//       queuefile reads the updated file as postcat shows it.
// Exit status 0: equal; 1: differences (printed); 2: usage or I/O error.
// Run with TZ=UTC, as postcat was.
#include "postcat_compare.hpp"
#include "update_plan.hpp"

#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <string>

using namespace cqmgr::queuefile::golden;

namespace {
// Prints differences under a heading; returns the exit status.
int report(const std::string& what, const std::vector<std::string>& diffs) {
    if (diffs.empty()) {
        std::cout << what << ": same as postcat\n";
        return 0;
    }
    std::cout << what << ": " << diffs.size() << " difference(s)\n";
    for (auto& d : diffs) std::cout << "  " << d << "\n";
    return 1;
}
} // namespace

int main(int argc, char** argv) {
    try {
        std::string cmd = argc > 1 ? argv[1] : "";
        if (cmd == "compare" && (argc == 5 || argc == 6)) {
            int batch = argc == 6 ? std::atoi(argv[5]) : 7;
            return report(argv[2], compare_all(argv[2], argv[3], argv[4], batch));
        }
        if (cmd == "update" && argc == 3) {
            auto plan = plan_updates(argv[2]);
            apply_updates(argv[2], plan);
            std::cout << argv[2] << ": " << plan.done_offsets.size() << " recipient(s) marked done"
                      << (plan.warn_offset ? ", warning time rewritten" : "")
                      << (plan.trace_offset ? ", trace_flags killed" : "") << "\n";
            return 0;
        }
        if (cmd == "check-update" && argc == 7) {
            auto plan = plan_updates(argv[3]);
            auto want = expected_after(parse_postcat(slurp(argv[2])), plan);
            auto have = parse_postcat(slurp(argv[5]));
            int rc = report(std::string(argv[4]) + " (postcat after updates)", diff_lines(want, have));
            rc |= report(std::string(argv[4]) + " (read back)", compare_all(argv[4], argv[5], argv[6], 5));
            return rc;
        }
        std::cerr << "usage: qf_golden compare QF POSTCAT_V POSTCAT_E [BATCH]\n"
                     "       qf_golden update QF\n"
                     "       qf_golden check-update ORIG_POSTCAT_V PLAN_QF UPDATED_QF "
                     "UPDATED_POSTCAT_V UPDATED_POSTCAT_E\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "qf_golden: " << e.what() << "\n";
        return 2;
    }
}
