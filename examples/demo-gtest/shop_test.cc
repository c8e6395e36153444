// A GoogleTest demo with known outcomes: Cart.RetriesPayment fails on
// every other run (a counter file, so that runs are deterministic),
// Cart.TalksToLegacyApi always, the rest never. Parameterized and typed
// tests show the ids GoogleTest gives them.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace {

// The number of this run, from 1: $DEMO_COUNTER, else .demo-runs in the
// working directory, counts them.
long NextRun() {
  const char* env = std::getenv("DEMO_COUNTER");
  std::string path = env != nullptr ? env : ".demo-runs";
  long n = 0;
  std::ifstream in(path);
  in >> n;
  in.close();
  std::ofstream(path) << ++n;
  return n;
}

int Total(std::initializer_list<int> prices) {
  int sum = 0;
  for (int p : prices) sum += p;
  return sum;
}

TEST(Cart, AddsItems) { EXPECT_EQ(Total({1, 2}), 3); }

TEST(Cart, RetriesPayment) {
  long run = NextRun();
  EXPECT_EQ(run % 2, 0) << "payment gateway timed out (run " << run << ")";
}

TEST(Cart, TalksToLegacyApi) {
  EXPECT_EQ(Total({1}), 2) << "the legacy API answered 1";
}

TEST(Cart, DISABLED_Refunds) {}

TEST(Cart, SkipsWithoutNetwork) { GTEST_SKIP() << "no network here"; }

class Prices : public ::testing::TestWithParam<int> {};

TEST_P(Prices, ArePositive) { EXPECT_GT(GetParam(), 0); }

INSTANTIATE_TEST_SUITE_P(Small, Prices, ::testing::Values(1, 2));

template <typename T>
class Amounts : public ::testing::Test {};

using AmountTypes = ::testing::Types<int, long>;
TYPED_TEST_SUITE(Amounts, AmountTypes);

TYPED_TEST(Amounts, StartAtZero) { EXPECT_EQ(TypeParam(), 0); }

}  // namespace
