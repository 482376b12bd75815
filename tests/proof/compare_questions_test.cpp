// The compare questions kemit_mutate asks (prover.h, CompareQuestion): a compare's sides that never
// differ by the asked amount where it runs are PROVEN apart at every launch; a launch where they do
// is REFUTED with a witness; a name no launch reaches has no answer.
#include <nlohmann/json.hpp>

#include "modules.h"
#include "test_support.h"

namespace kemit::proof::test {
namespace {

using nlohmann::json;

// A block of 64 lanes: lane < 64 never meets 64 (nor 100), lane 63 meets 63; the loop from the
// lane to 256 by 64 reaches 256 exactly on its last trip (lane 0: 0, 64, 128, 192 -> 256).
const std::string LANES = R"(; kemit canonical IR 1
kernel @lanes {
  arch gfx90a
  attr flat_work_group_size 1,64
  param %0 n : i32
  %1 = workitem_id {dim=x} : i32
  %2 = const {value=64} : i32
  %3 = icmp %1, %2 {pred=slt} : i1
  %4 = const {value=256} : i32
  for %5 = %1 to %4 step %2 {
    yield
  }
}
)";
const std::string LANES_PLAN = "; kemit launch plan 2\nlaunch lanes grid 1,1,1 block 64 lds 0 args n=scalar:7\n";

CompareAnswer answer_of(const std::vector<CompareQuestion>& questions, size_t index = 0) {
  auto answers = answer_compare_questions(LANES, LANES_PLAN, ArchLimits{}, questions);
  EXPECT_EQ(answers.size(), questions.size());
  return answers.size() > index ? answers[index] : CompareAnswer{};
}

TEST(CompareQuestions, ALaneNeverMeetsTheBlockSize) {
  CompareAnswer a = answer_of({{"%v3", 0}});
  EXPECT_EQ(a.question.name, "%v3");
  EXPECT_EQ(a.finding.verdict, ProofVerdict::PROVEN) << finding_text(a.finding);
  EXPECT_EQ(a.finding.op, "%3 = icmp %1, %2 {pred=slt} : i1");
  EXPECT_EQ(a.finding.launch, 0);
}

TEST(CompareQuestions, TheLastLaneMeetsOneBelowTheBlockSizeWithAWitness) {
  CompareAnswer a = answer_of({{"%v3", -1}});
  ASSERT_EQ(a.finding.verdict, ProofVerdict::REFUTED) << finding_text(a.finding);
  json w = json::parse(a.finding.witness);
  EXPECT_EQ(w["values"]["%1"], 63);
}

TEST(CompareQuestions, ALoopGuardAndItsLatchAreAskedBySide) {
  // guard: lo = lane against hi = 256, never equal; latch: iv + 64 reaches 256.
  auto answers = answer_compare_questions(LANES, LANES_PLAN, ArchLimits{}, {{"%v5.guard", 0}, {"%v5.again", 0}});
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_EQ(answers[0].finding.verdict, ProofVerdict::PROVEN) << finding_text(answers[0].finding);
  EXPECT_EQ(answers[0].finding.op, "for %5 = %1 to %4 step %2");
  EXPECT_EQ(answers[1].finding.verdict, ProofVerdict::REFUTED) << finding_text(answers[1].finding);
  // iv + 64 == 257 at lane 1's last trip (iv 193); iv + 64 == 320 never (iv < 256).
  EXPECT_EQ(answer_of({{"%v5.again", 1}}).finding.verdict, ProofVerdict::REFUTED);
  EXPECT_EQ(answer_of({{"%v5.again", 64}}).finding.verdict, ProofVerdict::PROVEN);
}

TEST(CompareQuestions, ANameNoLaunchReachesHasNoAnswer) {
  EXPECT_TRUE(answer_compare_questions(LANES, LANES_PLAN, ArchLimits{}, {{"%v99", 0}, {"%v4.guard", 0}}).empty());
}

}  // namespace
}  // namespace kemit::proof::test
