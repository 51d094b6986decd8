// Cluster frames around groups of boxes (fusion groups in the graph view).
#include <gtest/gtest.h>

#include "layout/Clusters.h"

using passlens::layout::clusterFrame;
using passlens::layout::Rect;

TEST(LayoutClusters, FrameEnclosesMembersWithPaddingAndLabelBand) {
    std::vector<Rect> boxes{{100, 50, 80, 30}, {90, 120, 60, 30}, {160, 200, 40, 20}};
    auto f = clusterFrame(boxes, 8, 14);
    ASSERT_TRUE(f);
    EXPECT_DOUBLE_EQ(f->frame.x, 90 - 8);
    EXPECT_DOUBLE_EQ(f->frame.y, 50 - 8 - 14);
    EXPECT_DOUBLE_EQ(f->frame.right(), 200 + 8);
    EXPECT_DOUBLE_EQ(f->frame.bottom(), 220 + 8);
    for (const auto& b : boxes) {
        EXPECT_TRUE(f->frame.contains({b.x, b.y}));
        EXPECT_TRUE(f->frame.contains({b.right(), b.bottom()}));
    }
    // The label sits in the band above the topmost member.
    EXPECT_GE(f->labelAnchor.y, f->frame.y);
    EXPECT_LT(f->labelAnchor.y + 14 / 2, 50.0);
    EXPECT_TRUE(f->frame.contains(f->labelAnchor));
}

TEST(LayoutClusters, SingleBoxAndEmpty) {
    auto f = clusterFrame({{10, 10, 20, 20}}, 5, 0);
    ASSERT_TRUE(f);
    EXPECT_DOUBLE_EQ(f->frame.x, 5);
    EXPECT_DOUBLE_EQ(f->frame.y, 5);
    EXPECT_DOUBLE_EQ(f->frame.width, 30);
    EXPECT_DOUBLE_EQ(f->frame.height, 30);
    EXPECT_FALSE(clusterFrame({}, 5, 10).has_value());
}
