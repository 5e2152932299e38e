import type { Command } from "commander";
import { notBuilt } from "./not-built.js";

export function registerSandbox(program: Command): void {
  notBuilt(
    program
      .command("sandbox")
      .description("run a local, simulated Workflow Instance Service with demo data"),
  );
}
