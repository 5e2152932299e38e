import type { Command } from "commander";
import { notBuilt } from "./not-built.js";

export function registerPlan(program: Command): void {
  notBuilt(
    program
      .command("plan")
      .description("show the API calls the rules imply against live data (dry run)")
      .argument("[paths...]", "files or folders of *.yaml / *.yml", ["rules/"]),
  );
}
