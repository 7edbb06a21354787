// Lets a section switch to another one (e.g. "Open in playground" from the gallery) without
// importing main.ts (which imports the sections).
let navigate: (section: string) => void = (section) => {
  location.hash = `#${section}`;
};

export function setNavigator(fn: (section: string) => void): void {
  navigate = fn;
}

export function goTo(section: string): void {
  navigate(section);
}
