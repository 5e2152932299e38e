import type { Command } from "commander";
import { notBuilt } from "./not-built.js";

export function registerExplain(program: Command): void {
  notBuilt(
    program
      .command("explain")
      .description("why one live instance matches each rule or not (GET only)")
      .argument("[paths...]", "files or folders of *.yaml / *.yml", ["rules/"]),
  );
}
