// Bandwidth sharing in the flow network, and routes over the device-link topologies.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <gtest/gtest.h>

#include <systemc>

#include "sim/flow_network.h"
#include "sim/topology.h"

namespace mimic::sim {
namespace {

struct Transfer {
  SimTime start;
  std::vector<PathUse> path;
  uint64_t bytes;
  SimTime end = 0;
};

// Runs the transfers from their start times and records when each ends.
void simulate(FlowNetwork& network, std::vector<Transfer>& transfers) {
  for (Transfer& t : transfers) {
    sc_core::sc_spawn([&network, &t] {
      sc_core::wait(sc_core::sc_time(double(t.start), sc_core::SC_NS));
      network.transfer(t.path, t.bytes);
      t.end = sc_core::sc_time_stamp().value();
    });
  }
  sc_core::sc_start();
}

class FlowNetworkTest : public ::testing::Test {
 protected:
  void SetUp() override { sc_core::sc_set_time_resolution(1, sc_core::SC_NS); }
};

TEST_F(FlowNetworkTest, OneFlowTakesBytesOverBandwidth) {
  FlowNetwork network("network");
  int link = network.addResource("link", 10.0);
  std::vector<Transfer> t{{0, {{link, 1.0}}, 1000}};
  simulate(network, t);
  EXPECT_EQ(t[0].end, 100u);
  EXPECT_EQ(network.stats(link).busyNs, 100u);
  EXPECT_EQ(network.stats(link).bytes, 1000.0);
}

TEST_F(FlowNetworkTest, EqualFlowsShareEqually) {
  FlowNetwork network("network");
  int link = network.addResource("link", 10.0);
  std::vector<Transfer> t{{0, {{link, 1.0}}, 1000}, {0, {{link, 1.0}}, 1000}};
  simulate(network, t);
  EXPECT_EQ(t[0].end, 200u);
  EXPECT_EQ(t[1].end, 200u);
}

TEST_F(FlowNetworkTest, RatesChangeWhenAFlowJoinsAndLeaves) {
  FlowNetwork network("network");
  int link = network.addResource("link", 10.0);
  std::vector<Transfer> t{{0, {{link, 1.0}}, 1000}, {50, {{link, 1.0}}, 1000}};
  simulate(network, t);
  EXPECT_EQ(t[0].end, 150u);  // 500 B alone, then 500 B at half rate
  EXPECT_EQ(t[1].end, 200u);  // 500 B at half rate, then 500 B alone
}

TEST_F(FlowNetworkTest, MaxMinFairnessGivesTheLeftoverToUnconstrainedFlows) {
  FlowNetwork network("network");
  int wide = network.addResource("wide", 10.0);
  int narrow = network.addResource("narrow", 4.0);
  std::vector<Transfer> t{{0, {{wide, 1.0}}, 600}, {0, {{wide, 1.0}, {narrow, 1.0}}, 400}};
  simulate(network, t);
  EXPECT_EQ(t[0].end, 100u);  // 6 GB/s: what the narrow flow leaves
  EXPECT_EQ(t[1].end, 100u);  // 4 GB/s: all of the narrow resource
}

TEST_F(FlowNetworkTest, WeightedUseCountsEveryCrossing) {
  FlowNetwork network("network");
  int hbm = network.addResource("hbm", 10.0);
  std::vector<Transfer> t{{0, {{hbm, 2.0}}, 1000}};  // read and write: two crossings
  simulate(network, t);
  EXPECT_EQ(t[0].end, 200u);
  EXPECT_EQ(network.stats(hbm).bytes, 2000.0);
}

TEST_F(FlowNetworkTest, ZeroBytesTakeNoTime) {
  FlowNetwork network("network");
  int link = network.addResource("link", 10.0);
  std::vector<Transfer> t{{7, {{link, 1.0}}, 0}};
  simulate(network, t);
  EXPECT_EQ(t[0].end, 7u);
}

TEST_F(FlowNetworkTest, RingRoutesTakeTheShorterWayRound) {
  FlowNetwork network("network");
  Topology ring(DeviceLinkConfig{"ring", 50.0, 1.0, 100}, 4, network);
  EXPECT_EQ(ring.route(0, 1).links.size(), 1u);
  EXPECT_EQ(ring.route(0, 2).links.size(), 2u);
  EXPECT_EQ(ring.route(0, 3).links.size(), 1u);
  EXPECT_EQ(ring.route(0, 2).latencyNs, 200u);
  EXPECT_NE(ring.route(0, 1).links, ring.route(1, 0).links);  // full duplex
  EXPECT_EQ(ring.route(2, 2).links.size(), 0u);
}

TEST_F(FlowNetworkTest, MeshAndSwitchRoutes) {
  FlowNetwork network("network");
  Topology mesh(DeviceLinkConfig{"full_mesh", 50.0, 1.0, 100}, 4, network);
  EXPECT_EQ(mesh.route(0, 2).links.size(), 1u);
  EXPECT_NE(mesh.route(0, 2).links, mesh.route(1, 2).links);
  Topology sw(DeviceLinkConfig{"switch", 50.0, 1.0, 100}, 4, network);
  Route r = sw.route(1, 3);
  EXPECT_EQ(r.links.size(), 2u);
  EXPECT_EQ(r.latencyNs, 200u);
  EXPECT_EQ(sw.route(0, 3).links[1], r.links[1]);  // same downlink into device 3
}

}  // namespace
}  // namespace mimic::sim
