import { bytesByPackage, packageOf } from './bench/lib/bundle-contents';
const [file, mode] = process.argv.slice(2);
const group = mode === 'file' ? (s: string) => { const p = packageOf(s); return p === 'payrelay' ? s.replace(/^.*?\/(shared|functions|infra)\//, '$1/') : s.replace(/^.*node_modules\//, ''); } : packageOf;
const rows = bytesByPackage(file as string, group);
let total = 0; for (const r of rows) total += r.bytes;
console.log('total', total);
for (const r of rows.slice(0, Number(process.env.N ?? 40))) console.log(String(r.bytes).padStart(7), r.pkg);
