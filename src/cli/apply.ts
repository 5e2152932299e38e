import type { Command } from "commander";
import { notBuilt } from "./not-built.js";

export function registerApply(program: Command): void {
  notBuilt(
    program
      .command("apply")
      .description("execute a saved plan exactly once, or plan and apply rules with --auto-approve")
      .argument("[paths...]", "a plan.json, or rule files/folders with --auto-approve"),
  );
}
