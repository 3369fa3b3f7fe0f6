// The release this build advertises and the package root (services/contract/package.ts).
import { locatePackage } from "../contract/package.js";

export const release = (): string => locatePackage().release;

/** The package root (holds generated/openapi.json). */
export const packageRoot = (): string => locatePackage().root;
