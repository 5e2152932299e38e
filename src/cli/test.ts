import type { Command } from "commander";
import { notBuilt } from "./not-built.js";

export function registerTest(program: Command): void {
  notBuilt(
    program
      .command("test")
      .description("run rule tests against fixture instances, no network")
      .argument("[paths...]", "files or folders of rules and their *.test.yaml", ["rules/"]),
  );
}
