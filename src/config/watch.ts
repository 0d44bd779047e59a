import { statSync, watch, type FSWatcher } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { ConfigError, loadConfigFile, type RouterConfig } from "./load.js";

export interface WatchHandlers {
  onReload(config: RouterConfig): void;
  onError(error: ConfigError): void;
}

/**
 * Watches a config file and reloads it when it changes. The directory is
 * watched, not the file, because editors and ConfigMap updates replace the file
 * (rename) rather than write it in place. Changes are debounced; an invalid
 * file is reported and the running config stays.
 */
export function watchConfig(path: string, handlers: WatchHandlers, debounceMs = 150): { close(): void } {
  const full = resolve(path);
  const name = basename(full);
  let timer: NodeJS.Timeout | undefined;
  let last = "";
  const reload = () => {
    try {
      const cfg = loadConfigFile(full);
      handlers.onReload(cfg);
    } catch (err) {
      handlers.onError(err instanceof ConfigError ? err : new ConfigError(full, [{ path: "", message: (err as Error).message }]));
    }
  };
  let watcher: FSWatcher;
  try {
    watcher = watch(dirname(full), (_event, file) => {
      // Kubernetes ConfigMaps swap a "..data" symlink; accept those events too.
      if (file !== null && file !== name && !String(file).startsWith("..")) return;
      clearTimeout(timer);
      timer = setTimeout(() => {
        let text = "";
        try {
          text = JSON.stringify(fileStamp(full));
        } catch {
          // file briefly missing during a replace: reload will report it if it stays so
        }
        if (text && text === last) return;
        last = text;
        reload();
      }, debounceMs);
    });
  } catch (err) {
    handlers.onError(new ConfigError(full, [{ path: "", message: `cannot watch: ${(err as Error).message}` }]));
    return { close() {} };
  }
  return {
    close() {
      clearTimeout(timer);
      watcher.close();
    },
  };
}

/** Size + mtime: enough to skip duplicate fs events for one change. */
function fileStamp(p: string): { size: number; mtimeMs: number } {
  const s = statSync(p);
  return { size: s.size, mtimeMs: s.mtimeMs };
}
