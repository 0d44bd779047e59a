import { describe, expect, it } from "vitest";
import { parseClusterState } from "../../src/store/redis/health.js";

// CLUSTER NODES as Redis 7 writes it: a primary killed and failed over (its replica promoted).
const NODES = [
  "07c37dfeb235213a872192d90877d0cd55635b91 127.0.0.1:30004@31004 slave e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 0 1426238317239 4 connected",
  "67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 127.0.0.1:30002@31002 master - 0 1426238316232 2 connected 5461-10922",
  "292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f 127.0.0.1:30003@31003 master - 0 1426238318243 3 connected 10923-16383",
  "6ec23923021cf3ffec47632106199cb7f496ce01 127.0.0.1:30005@31005 master - 0 1426238316232 7 connected 0-5460",
  "824fe116063bc5fcf9f4ffd895bc17aee7731ac3 127.0.0.1:30006@31006 slave 292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f 0 1426238317741 6 connected",
  "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1:30001@31001 master,fail - 1426238316232 1426238316232 1 disconnected",
  "",
].join("\n");

describe("a Redis Cluster's state from CLUSTER INFO and CLUSTER NODES", () => {
  it("counts nodes, reachable ones and live primaries, and names the failing ones by address", () => {
    expect(parseClusterState("cluster_state:ok\r\ncluster_slots_assigned:16384\r\n", NODES)).toEqual({
      state: "ok",
      nodes: { total: 6, reachable: 5, primaries: 3, failing: ["127.0.0.1:30001"] },
    });
  });

  it("a node only suspected (fail?) counts as failing; cluster_state other than ok is fail", () => {
    const suspected = NODES.replace("master,fail - 1426238316232 1426238316232 1 disconnected", "master,fail? - 1426238316232 1426238316232 1 connected 0-5460");
    expect(parseClusterState("cluster_state:fail\r\n", suspected)).toMatchObject({ state: "fail", nodes: { reachable: 5, failing: ["127.0.0.1:30001"] } });
  });
});
