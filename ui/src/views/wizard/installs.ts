// The wizard's installs: a framework (its Install button) or the releases a
// sweep ticked and lacks (made by Start), each shown with its lines and
// figures and stopped by Cancel install.
import { useState } from "preact/hooks";
import { Channel } from "@tauri-apps/api/core";
import { api, call, type InstallProgress, type InstallUpdateDto, type ReleaseInstallDto, type ReleasesMadeDto } from "../../api";

/** What is being installed: the framework (or release), its last lines, its figures. */
export interface Installing {
  framework: string;
  lines: string[];
  progress: InstallProgress | null;
}

export function useInstalls(setError: (e: unknown) => void, onInfoChanged: () => void) {
  const [installing, setInstalling] = useState<Installing | null>(null);

  /** Makes the sweep's missing releases with the install panel's lines and
   * Cancel; null when it failed or was cancelled (the error is shown). */
  async function installReleases(frameworks: string[]): Promise<ReleasesMadeDto | null> {
    const lines: string[] = [];
    const ch = new Channel<ReleaseInstallDto>();
    ch.onmessage = (u) => {
      lines.push(`${u.release}: ${u.line}`);
      setInstalling({ framework: u.release, lines: lines.slice(-30), progress: u.progress });
    };
    try {
      const made = await call(api.installReleases(frameworks, ch));
      onInfoChanged();
      return made;
    } catch (e) {
      setError(e);
      return null;
    } finally {
      setInstalling(null);
    }
  }

  async function install(framework: string) {
    const lines: string[] = [];
    let progress: InstallProgress | null = null;
    setInstalling({ framework, lines, progress });
    setError(null);
    const ch = new Channel<InstallUpdateDto>();
    ch.onmessage = (u) => {
      lines.push(u.line);
      progress = u.progress;
      setInstalling({ framework, lines: lines.slice(-30), progress });
    };
    try {
      await call(api.installFramework(framework, ch));
      onInfoChanged();
    } catch (e) {
      // pip's (or uv's) reason is in the message; a cancel says so.
      setError(e);
    } finally {
      setInstalling(null);
    }
  }

  async function cancelInstall() {
    if (!installing) return;
    try {
      await call(api.cancelInstall(installing.framework));
    } catch (e) {
      setError(e);
    }
  }

  return { installing, install, installReleases, cancelInstall };
}
