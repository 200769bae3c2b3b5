// The table's sounds: beeps made with WebAudio (no audio file), off until the person turns them on
// (remembered in this browser); S.sounds lists the sounds played, for tests.
import {t} from "./i18n.js";
import {$, S} from "./table-state.js";

const SOUND_KEY = "ludoteca.sounds";
const audio = {ctx: null};
const TONES = {turn: [660, 880], event: [523, 392], chat: [740]};

function soundsOn() {
  return localStorage.getItem(SOUND_KEY) === "1";
}

export function setupSounds() {
  showSounds();
  $("sound-toggle").addEventListener("click", () => {
    localStorage.setItem(SOUND_KEY, soundsOn() ? "0" : "1");
    showSounds();
    if (soundsOn()) beep("turn"); // a sample, and the audio starts within the click (browsers require it)
  });
}

function showSounds() {
  const on = soundsOn();
  const button = $("sound-toggle");
  button.textContent = on ? t("Sounds on") : t("Sounds off");
  button.setAttribute("aria-pressed", on ? "true" : "false");
}

export function beep(kind) {
  if (!soundsOn()) return;
  S.sounds.push(kind);
  try {
    const Ctx = window.AudioContext || window.webkitAudioContext;
    if (!Ctx) return;
    if (!audio.ctx) audio.ctx = new Ctx();
    const ctx = audio.ctx;
    if (ctx.state === "suspended") ctx.resume();
    (TONES[kind] || TONES.event).forEach((freq, i) => {
      const osc = ctx.createOscillator();
      const gain = ctx.createGain();
      const start = ctx.currentTime + i * 0.15;
      osc.type = "sine";
      osc.frequency.value = freq;
      gain.gain.setValueAtTime(0.0001, start);
      gain.gain.exponentialRampToValueAtTime(0.15, start + 0.02);
      gain.gain.exponentialRampToValueAtTime(0.0001, start + 0.13);
      osc.connect(gain).connect(ctx.destination);
      osc.start(start);
      osc.stop(start + 0.14);
    });
  } catch (e) {
    console.warn(e);
  }
}
