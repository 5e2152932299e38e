/** Runs before every test file (vitest setupFiles): what the file created through test/helpers/temp.ts goes after it. */
import { afterAll } from "vitest";
import { cleanUp } from "./temp.js";

afterAll(cleanUp);
