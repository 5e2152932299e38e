import type { Command } from "commander";
import { notBuilt } from "./not-built.js";

export function registerValidate(program: Command): void {
  notBuilt(
    program
      .command("validate")
      .description("check rule files (schema, JSONata, aliases, names, conflicts) without any request")
      .argument("[paths...]", "files or folders of *.yaml / *.yml", ["rules/"]),
  );
}
