// JSON parsing: values, escapes (including surrogate pairs), integers, and positioned errors.
#include "support/json.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessel::json {
namespace {

using ::testing::HasSubstr;

TEST(JsonTest, ParsesNestedValues) {
  auto v = Parse(R"( {"a": [1, -2.5, 3e2, true, false, null], "b": {"c": "x\"y\\z\u00e9\ud83d\ude00\n"},
                      "big": 9007199254740993, "a2": []} )");
  ASSERT_TRUE(v.ok()) << v.status();
  ASSERT_TRUE(v->is_object());
  EXPECT_EQ(v->members().size(), 4u);
  const Value* a = v->Find("a");
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->items().size(), 6u);
  EXPECT_TRUE(a->items()[0].is_integer());
  EXPECT_EQ(a->items()[0].integer(), 1);
  EXPECT_EQ(a->items()[1].number(), -2.5);
  EXPECT_FALSE(a->items()[1].is_integer());
  EXPECT_EQ(a->items()[2].number(), 300.0);
  EXPECT_FALSE(a->items()[2].is_integer());
  EXPECT_TRUE(a->items()[3].bool_value());
  EXPECT_TRUE(a->items()[5].is_null());
  EXPECT_EQ(v->Find("b")->Find("c")->str(), "x\"y\\z\xc3\xa9\xf0\x9f\x98\x80\n");
  EXPECT_EQ(v->Find("big")->integer(), 9007199254740993ll);  // exact beyond double precision
  EXPECT_EQ(v->Find("missing"), nullptr);
}

TEST(JsonTest, ErrorsSayWhere) {
  auto v = Parse("{\n  \"a\": 1,\n  \"b\" 2}", "config.json");
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(std::string(v.status().message()), HasSubstr("config.json: expected ':' at line 3, column 7"));
  for (const char* bad : {"", "{", "[1,]", "{\"a\":}", "\"abc", "01x", "-", "1.", "\"\\x\"", "\"\\ud800\"",
                          "[1] 2", "{\"a\" :1,}", "tru", "\"a\nb\""}) {
    EXPECT_FALSE(Parse(bad).ok()) << bad;
  }
  EXPECT_THAT(std::string(Parse(std::string(2000, '[')).status().message()), HasSubstr("too deep"));
}

}  // namespace
}  // namespace tessel::json
